/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  signIn:
    'This is the sign-in. Returns a 15-minute access token and a refresh token. An unknown e-mail and a wrong PIN get the same 401 in the same time. ' +
    'Each attempt is counted on its e-mail (known or not) and on its client address before its PIN is checked, so parallel requests, other addresses and ' +
    'other server processes check no more PINs: after 5 failures the e-mail and the address each lock, 30 s at first and doubling with each further failure ' +
    '(at most 1 h). While locked no PIN is checked: a locked address gets 429 `SignInThrottled`; ' +
    'a locked e-mail gets 423 `PinLocked` whatever the PIN and whether or not a site user has it (same status, body and headers). ' +
    "Both carry `Retry-After` and `lockedUntil`, the lock's end; an owner ends an e-mail's lock with `sitegrid site-user unlock --email`. " +
    "A correct PIN resets the e-mail's count and counts nowhere.",
  changeOwnPin:
    'The current PIN is the credential; any site role. The same checks, answers and locks as sign-in, counted on the same counters (401; ' +
    'while locked, whatever the PIN, 423 `PinLocked` or 429 `SignInThrottled` with `Retry-After` and `lockedUntil`). 204; ' +
    'every session of the user ends, so sign in again with the new PIN.',
  renewSession:
    'The refresh token is the credential. Each refresh token works once; the answer carries a new one. ' +
    'Presenting a used token again revokes every token of that sign-in (reuse detection). A PIN change or a removed user ends the session. Failures: ' +
    'the uniform 401.',
  endSession:
    'The refresh token is the credential. Revokes every refresh token of the sign-in; access tokens already issued run out within 15 minutes. ' +
    '204 whether or not the token was known.',
  localPublicKeySet:
    'The ES256 public keys that verify site-PIN tokens of this site (issuer `sitegrid-site-local`): ' +
    'the current key and retired keys whose tokens may still be alive. Never a private key.',
}
