const COMPLETE_NOTE = [
  'Limits per organisation and tier: `requestsPerMinute` (rolling minute) and `tokensPerDay` (UTC day); 429 `RateLimited` with `Retry-After`.',
  'Prompts bound for a provider that is not `trusted` are redacted first (IP addresses, CIP routes, `csk_` keys, PIN-like digit runs); ' +
    '`redactions` counts them.',
  '`stream: true` answers `text/event-stream`: `event: delta` `{text}` as the model writes, then `event: done` ' +
    '(model, tier, finishReason, usage, redactions, grounding) or `event: error` `{code, status, message}` ' +
    '(`AiProviderTimeout` when the provider sends no content for its `timeoutMs`: keep-alives do not count; ' +
    '`ServiceUnavailable` when the server shuts down meanwhile: send the request again). ' +
    'A failure before the first event is an ordinary problem response.',
  'Provider failures: 502 `AiProviderError`, 503 `AiProviderUnavailable` (with `Retry-After` when known), 504 `AiProviderTimeout`; ' +
    "the provider's own text is never returned. 503 `AiNotConfigured` when the server has no AI configuration.",
  'Prompts and completions are not logged and not stored; only the token usage is. The one exception is asked for by the client: ' +
    'with `Idempotency-Key` (not with `stream: true`), the answer is kept sealed for 24 hours so that a retry replays it instead of asking the model again.',
].join(' ')

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  askLanguageModel:
    `Spec 4.4. \`tier\` picks a configured class of model, \`model\` one from the allow-list, neither: the default tier. ` +
    `\`siteId\` grounds the answer in that site (see \`grounding\`). ${COMPLETE_NOTE}`,
  readAiUsage: "Requests and tokens per UTC day and tier (`from`..`to`, at most 366 days, default the last 30), and each tier's limits with the current load.",
}
