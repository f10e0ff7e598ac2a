import { MAX_FIELD_PROBLEMS } from '../../http/problem.ts'
import { MAX_LINE_PROBLEMS } from './bulk.ts'
import { INSTANCE_LIMITS } from './limits.ts'

const SCOPE_404 = 'A site or instance of another organisation or another site is the uniform 404.'

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  createInstance:
    `Spec 2.4. \`id\` is given by the caller and unique in the site (409 \`Conflict\`); \`controllerId\` must name a controller of the same site (422 ` +
    `\`UnprocessableEntity\` naming \`/controllerId\`). ${SCOPE_404}`,
  bulkInstances:
    `Each line is an instance body (spec 2.4) checked like \`POST …/instances\`; a line whose id exists replaces that instance whole (absent optional fields ` +
    `are cleared), one identical to the stored instance is \`unchanged\`. With \`dryRun=true\` nothing is written and the 200 report says what would be ` +
    `created, updated, left unchanged and refused (by line). Otherwise all or nothing: any refused line answers 422 \`UnprocessableEntity\` with the report ` +
    `in \`report\` and each problem in \`errors\` (pointer \`/INDEX/field\` for JSON, \`/line/N/field\` for CSV), and nothing is written; ` +
    `a line lists at most ${MAX_LINE_PROBLEMS} problems (the last saying how many more it has), \`errors\` the first ${MAX_FIELD_PROBLEMS}. ` +
    `At most ${INSTANCE_LIMITS.bulkMaxItems} lines, within the body size limit; a CSV header names each field once and at most ` +
    `${INSTANCE_LIMITS.tagMappingsMaxKeys} \`tag:\` columns. Batches sent at once that name the same new ids all apply: ` +
    `one creates them, the others are planned again on what it left (replaced or \`unchanged\`); ` +
    `only a site that keeps changing under a batch answers 409 \`Conflict\` (nothing written; retry). ${SCOPE_404}`,
  listInstances: `Paged, ordered by id; filters \`controllerId\`, \`area\`, \`typeId\` (exact matches, combined with AND). ${SCOPE_404}`,
  readInstance: SCOPE_404,
  updateInstance:
    `All fields optional (\`id\` is fixed): an absent field is left as it is, a null clears \`typeVersion\` or \`area\`; ` +
    `\`tagMappings\` and \`config\` are replaced whole. A \`controllerId\` not of this site is 422. ${SCOPE_404}`,
  deleteInstance: SCOPE_404,
}
