/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  me:
    'The authenticated caller: credential kind, id, role (organisation role in cloud mode, site role on a site server), platform-admin flag, display name ' +
    "and e-mail, the host's organisation and the server's mode. The web console reads it after sign-in; integrators can use it to check a credential. " +
    'Any credential: an API key, a signed-in user or a site user; a signed-in account whose membership request is still pending gets 403.',
}
