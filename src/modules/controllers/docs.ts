const DRY_RUN =
  'With `dryRun=true` the body is checked exactly as the save checks it (the same 400, 404 and 409 problems) and the answer is the controller as it ' +
  'would be, with its `cipRoute` and `pollBudget`, while nothing is written (no row, no audit event): a form asks it as the engineer types.'
const SCOPE_404 = 'A site or controller of another organisation or another site is the uniform 404.'
const BUDGET = "The answer carries `pollBudget`: the instances' mapped tags against the poll interval, timeout and retries, with warnings (never a refusal)."

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  createController:
    `Spec 2.3: \`name\`, \`platform\`, \`connection\` (\`protocol\`, \`ipAddress\`) and \`assetNumber\` required. The id (\`ctl_…\`) is assigned. ` +
    `\`cipPath\` is checked for CIP protocols. ${BUDGET} ${DRY_RUN} (200; its \`id\` is a placeholder). ${SCOPE_404}`,
  listControllers:
    `Paged, ordered by id (ids are time-ordered: creation order to the millisecond); ` + `\`edgeId\` keeps those assigned to one edge gateway. ${SCOPE_404}`,
  readController: `With the CIP route explained in words (\`cipRoute\`). ${BUDGET} ${SCOPE_404}`,
  updateController:
    `Spec 2.3 update fields, all optional; an absent field is left as it is, a null clears a nullable one (\`name\`, \`firmwareVersion\`, ` +
    `\`connection.cipPath\`); \`connection\` merges field by field. ${BUDGET} ${DRY_RUN} ${SCOPE_404}`,
  assignController:
    `Spec 4.2: \`edgeId\` (required, 0 to 50 characters) names the gateway that polls the controller, \`edgePlcId\` (nullable, 0 to 100) its id there. ` +
    `Reassigning replaces the previous assignment; an empty \`edgeId\` unassigns. ${SCOPE_404}`,
  unassignController: `No body. Clears \`edgeId\` and \`edgePlcId\`; idempotent. ${SCOPE_404}`,
  deleteController: `Refused with 409 \`Conflict\` (and nothing changes) while instances reference the controller. ${SCOPE_404}`,
}
