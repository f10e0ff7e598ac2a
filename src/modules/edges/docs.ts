/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  edgeConfig:
    "Everything an edge gateway needs to poll its controllers: each assigned controller's connection settings, checked CIP route and " +
    'instances with their tag mappings. Answered with `ETag: "<version>"`; send it back as `If-None-Match` and an unchanged ' +
    'configuration answers 304 with no body, after one indexed read (poll every few seconds). The version moves with any change to ' +
    "the site's controllers or instances (an edit elsewhere in the site also moves it: the gateway then fetches the same configuration " +
    'once more). An edge exists through its assignments: one with no controller assigned answers 404, like an unknown site. ' +
    'Use a key restricted to the site (`siteId` at mint).',
}
