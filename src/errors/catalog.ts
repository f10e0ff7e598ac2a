/**
 * Every wire error code with its HTTP status, title and documentation. Codes never change once shipped.
 * `satisfies` makes a missing entry a compile error; `src/errors/errors.test.ts` walks the whole table.
 */
export const catalog = {
  ValidationFailed: {
    status: 400,
    title: 'The request is not valid',
    doc: 'A field breaks a rule of the schema. `errors` lists each field (`in`, `pointer`) with the rule it breaks (of a request its schema refuses, the first 100, `detail` saying how many more).',
  },
  MalformedBody: {
    status: 400,
    title: 'The body could not be parsed',
    doc: 'The body is not well-formed for its content type (for example broken JSON). A JSON content type with no content is no body.',
  },
  MalformedRequest: {
    status: 400,
    title: 'The request is not well-formed HTTP',
    doc:
      "The server's HTTP/1.1 parser refused the request before any route read it (RFC 9112): a request line, a header " +
      "line or the body's framing (`Content-Length`, `Transfer-Encoding`, a chunk) that is not as the protocol writes it. " +
      'The detail names the part and the rule; the connection is closed.',
  },
  ReservedRole: {
    status: 400,
    title: 'The role is reserved for the account control plane',
    doc: 'Roles `platform_admin`, `platform_operator` and `service` (any case) cannot be given to a tenant API key.',
  },
  ExpiryPolicyViolation: {
    status: 400,
    title: 'Expiry outside the allowed window',
    doc: '`expiresAt` must lie from 1 hour to 730 days after the current time; a past value fails the minimum.',
  },
  Unauthorized: {
    status: 401,
    title: 'Unauthorized',
    doc:
      'The credential is missing, malformed, unknown, wrong, revoked or expired, ' +
      'or belongs to another organisation than the host. The answer is the same in every case.',
  },
  Forbidden: { status: 403, title: 'Forbidden', doc: 'The caller is authenticated but its role is too low for this operation.' },
  NotFound: {
    status: 404,
    title: 'Not found',
    doc: 'The resource does not exist, belongs to another organisation, or was revoked. The cause is never revealed.',
  },
  MethodNotAllowed: { status: 405, title: 'Method not allowed', doc: 'The path exists but not with this method.' },
  Conflict: { status: 409, title: 'Conflict', doc: 'The request conflicts with the current state (a duplicate, or a resource still in use).' },
  ConfirmationRequired: {
    status: 409,
    title: 'Confirmation required',
    doc: 'A destructive operation needs an explicit confirmation; the answer says what would be affected.',
  },
  RequestTimeout: {
    status: 408,
    title: 'The request did not arrive in time',
    doc:
      'The request headers did not arrive whole within `SITEGRID_HEADERS_TIMEOUT_MS`, or the whole request (headers and ' +
      'body) within `SITEGRID_REQUEST_TIMEOUT_MS`. Nothing was changed; the connection is closed.',
  },
  PayloadTooLarge: { status: 413, title: 'Payload too large', doc: 'The body exceeds the configured size limit (`SITEGRID_BODY_LIMIT_BYTES`).' },
  UnsupportedMediaType: {
    status: 415,
    title: 'Unsupported media type',
    doc:
      'The content type of the body (or its absence, when a body is sent) ' +
      'is not one this endpoint reads. `acceptedTypes` lists those it does, for example `["application/json"]`; ' +
      'nothing was changed.',
  },
  UnprocessableEntity: {
    status: 422,
    title: 'Unprocessable entity',
    doc: 'The body is well-formed but refers to something that does not exist or cannot be used.',
  },
  HeadersTooLarge: {
    status: 431,
    title: 'Request headers too large',
    doc: 'The request line and headers together exceed 16 KiB. Nothing was changed; the connection is closed.',
  },
  RateLimited: { status: 429, title: 'Too many requests', doc: 'The per-credential request rate was exceeded. `Retry-After` says when to try again.' },
  PackageInvalid: {
    status: 422,
    title: 'The tenant package is not valid',
    doc:
      'The package is truncated, tampered with (a count or checksum does not ' +
      'match), of an unknown newer format version, of another organisation, or holds a row value its column cannot hold (`part`, `row`, `column`). ' +
      '`reason` says which; nothing was changed.',
  },
  IdempotencyKeyReused: {
    status: 422,
    title: 'The idempotency key was used for another request',
    doc:
      'This organisation already used the `Idempotency-Key` ' +
      'within the last 24 hours for a request with another method, path or body. Send a new key for a new request; ' +
      'the earlier answer is unchanged.',
  },
  IdempotencyKeyInProgress: {
    status: 409,
    title: 'A request with this idempotency key is still executing',
    doc:
      'Another request with the same ' +
      '`Idempotency-Key` (and the same body) is still executing and did not finish within `SITEGRID_IDEMPOTENCY_WAIT_MS`. ' +
      'Retry after `Retry-After` seconds to receive its answer.',
  },
  InternalError: {
    status: 500,
    title: 'Internal error',
    doc: 'An unexpected failure. Nothing about its cause is returned; the request id in `instance` finds it in the log.',
  },
  ServiceUnavailable: {
    status: 503,
    title: 'Service unavailable',
    doc: 'A dependency (the database, the identity provider) is not reachable, or the server is too busy to take the write (alarm writes: `Retry-After` says when), or is shutting down (an AI completion stream open then ends with it). Nothing was changed; retry later.',
  },
  AiNotConfigured: {
    status: 503,
    title: 'AI completion is not configured',
    doc: 'This server has no AI configuration (`SITEGRID_AI_CONFIG_FILE` is not set), so `POST /api/ai/complete` is switched off.',
  },
  AiTierUnknown: { status: 400, title: 'Unknown AI tier', doc: '`tier` names no configured tier. Omit it for the default tier.' },
  AiModelNotAllowed: {
    status: 400,
    title: 'AI model not allowed',
    doc: "`model` is not in the configured allow-list (`allowedModels`). Omit it to use the tier's model.",
  },
  AiProviderError: {
    status: 502,
    title: 'The AI provider failed',
    doc: "The AI provider answered with an error or with an answer that could not be read. The provider's own text is never returned.",
  },
  AiProviderUnavailable: {
    status: 503,
    title: 'The AI provider is unavailable',
    doc: 'The AI provider could not be reached, is overloaded, or kept rate-limiting after the retries. `Retry-After` is set when known.',
  },
  AiProviderTimeout: {
    status: 504,
    title: 'The AI provider timed out',
    doc: 'The AI provider did not answer (or went silent mid-stream) within its configured `timeoutMs`, retries included.',
  },
  PinLocked: {
    status: 423,
    title: 'Site sign-in locked',
    doc:
      'Site-PIN sign-in (`POST /auth/site/login`, `POST /auth/site/pin`): ' +
      'this e-mail is locked after repeated wrong PINs. Every attempt gets this same answer while the lock lasts, ' +
      'whatever the PIN and whether or not a site user has the e-mail (no PIN is checked). ' +
      "`Retry-After` gives the seconds left and `lockedUntil` the lock's end; " +
      'an owner can end it with `sitegrid site-user unlock --email`.',
  },
  SignInThrottled: {
    status: 429,
    title: 'Too many failed sign-ins from this address',
    doc:
      'Site-PIN sign-in: this client address made too many wrong ' +
      'attempts; no PIN is checked until `Retry-After` seconds have passed. The delay doubles with each further failure.',
  },
  AlarmStateConflict: {
    status: 409,
    title: "The alarm's state does not allow this transition",
    doc:
      'ISA-18.2 alarm lifecycle: only an unacknowledged ' +
      'alarm (active or returned to normal) can be acknowledged; a shelved or out-of-service alarm cannot be shelved; ' +
      'only a shelved alarm can be unshelved and only an out-of-service alarm returned to service. ' +
      'Also answered when another alarm of the same instance and condition is already open. ' +
      'Read the alarm for its current `state`.',
  },
  SignInFailed: {
    status: 400,
    title: 'The sign-in could not be completed',
    doc:
      'The redirect back from the identity provider could not be accepted: ' +
      'the sign-in attempt expired or was already used, it was started in another browser, the provider refused it, ' +
      'or it signed you in for another organisation. Start again at `GET /auth/login`.',
  },
  HistorianHeaderInvalid: {
    status: 422,
    title: 'The historian export does not fit its layout',
    doc:
      'POST /api/historian/import-batches: ' +
      'the header (or the lines before it) of `trend_csv` does not match the chosen `format`, or the file is empty. ' +
      '`errors` names the part and the line. Nothing is stored.',
  },
  HistorianFormatUndetected: {
    status: 422,
    title: 'The historian export layout was not recognised',
    doc:
      '`format=auto` found no known layout in the first ' +
      'lines of `trend_csv`; the detail lists the candidates. Choose `format` explicitly. Nothing is stored.',
  },
  HistorianCsvInvalid: {
    status: 422,
    title: 'The historian file is not readable CSV',
    doc:
      'A part (`trend_csv` or `mapping_csv`) is not CSV that can be ' +
      'read: UTF-16, a NUL character, an unterminated quote, a row over the size cap. `errors` names the part and the line. ' +
      'Nothing is stored.',
  },
  HistorianMappingInvalid: {
    status: 422,
    title: 'The tag mapping is not valid',
    doc:
      '`mapping_csv` (`historian_tag,instance_id,tag_key[,unit][,scale]`) ' +
      'has problems: a missing column, an empty cell, a bad scale, a tag mapped twice, ' +
      'or an instance that does not exist in the site. `errors` lists each problem with its line. Nothing is stored.',
  },
  ConsoleNotBuilt: {
    status: 503,
    title: 'The web console is not built',
    doc:
      'The server has no console build to serve (web/dist/console is missing). ' +
      'Run `npm run build:console` (`npm ci`, `npm start` and `npm test` run it). The API works without it.',
  },
  LinkChecksumMismatch: {
    status: 400,
    title: 'The checksum does not match the content',
    doc:
      'A fleet-link upload (a historian chunk) carries a `sha256` of its canonical content, and the content received ' +
      'hashes otherwise: it was corrupted or cut on the way. Nothing is stored; send it again.',
  },
  LinkSiteNotLinked: {
    status: 403,
    title: 'The site is not linked to this site server',
    doc: "A fleet-link request names a site that is not one of the site server's sites (those it was registered for). " + 'Nothing is stored.',
  },
  AlarmsFromSiteServer: {
    status: 409,
    title: "This site's alarms come from its site server",
    doc:
      'Cloud, fleet link: the site is kept by a site server, so its alarm events are posted to that server (its gateways ' +
      'are on site) and reach the cloud through the link. Post them to the site server. Nothing is stored.',
  },
  LinkOrgMismatch: {
    status: 409,
    title: "The site server holds another organisation's data",
    doc:
      'POST /api/link/enrol (and `sitegrid link enrol`): the site server already holds the data of an organisation ' +
      'other than the one the enrolment code belongs to; the detail names both organisation ids (`siteOrgId`, `cloudOrgId`). ' +
      "A tenant transfer keeps ids, so a site server moved from this cloud enrols; another organisation's never does. " +
      "The code is not used up: enrol a site server that holds no data, or this organisation's.",
  },
  LinkVersionMismatch: {
    status: 409,
    title: 'The peer speaks another fleet-link protocol',
    doc:
      'The fleet link: the site server announced a protocol version (`protocol` in the enrolment body, the ' +
      '`Sitegrid-Link-Protocol` header on the link endpoints) that this server does not speak. Nothing is changed; ' +
      "both sides keep working locally. Upgrade the older side; the answer carries this server's `Sitegrid-Link-Protocol` " +
      'and `Sitegrid-Schema`.',
  },
  LinkCloudUnavailable: {
    status: 502,
    title: 'The cloud could not be reached or did not answer as expected',
    doc:
      '`sitegrid link enrol` (site server): the cloud cell did not answer, or answered with something other than the ' +
      "fleet link's answer (the detail quotes its status and code). Nothing was stored on the site server. Check the URL, " +
      'the network and `HTTPS_PROXY`, then try again with the same code.',
  },
  LinkDiverged: {
    status: 409,
    title: 'The site server diverged from what the cloud applied',
    doc:
      "The push's `after` and changes do not continue what the cloud applied for this site server: `after` (tx, seq) is above the cloud's mark, " +
      'or below it without the change at the mark, or with that change different (the site was restored from an old backup), ' +
      'or the epoch is not the enrolled one. `reason` says which. Nothing was applied; the site reseeds from a tenant package.',
  },
  LinkChangeRefused: {
    status: 422,
    title: 'A change of the batch is not valid',
    doc:
      'A change of a link batch names a table that is not linked in that direction, another site, another organisation, ' +
      "a key that is not the row's primary key, a column the table does not have, or a value its column cannot hold. " +
      '`index`, `table`, `column` and `rule` say which; nothing of the batch was applied.',
  },
  // Electrical studies (issue 31).
  StudyDataMissing: {
    status: 422,
    title: 'The network lacks data the study needs',
    doc:
      'An electrical study needs parameters the network does not hold. `missing` lists each `{nodeId, parameter, reason}` ' +
      '(the first 100; `missingCount` counts them all). Nothing is assumed in their place: set them (the node update, ' +
      '`study` object) and ask again.',
  },
} as const satisfies Record<string, { status: number; title: string; doc: string }>

export type ErrorCode = keyof typeof catalog

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(catalog, value)
}
