/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  mintApiKey:
    "Returns the plaintext exactly once. The tenant is the caller's organisation, never taken from the body. " +
    'For an edge gateway, restrict the key to its site (`siteId`) and, optionally, to the client networks it calls from (`networks`).',
  listApiKeys:
    'Non-revoked keys (expired ones included), newest created first, each with its restriction (`siteId`, `networks`). Never a plaintext or verifier.',
  readApiKey: 'One non-revoked key, as in the list. An absent, foreign or revoked key answers the same 404.',
  revokeApiKey:
    '204 with no body. An absent, foreign or already revoked key answers the same 404: a client retrying after a timeout may treat it as success. ' +
    'A key may revoke itself.',
}
