/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  listSiteUsers:
    'Ordered by e-mail; paged with `limit` and `cursor`. Never a PIN or its hash. Site server only. ' +
    'Nobody gives a role above their own or manages a user ranked above them (403).',
  addSiteUser:
    'The PIN (6 to 12 digits) is hashed with scrypt and never returned. 409 `Conflict` when the e-mail is taken. Site server only. ' +
    'Nobody gives a role above their own or manages a user ranked above them (403).',
  readSiteUser:
    'An absent or foreign user answers the uniform 404. Site server only. Nobody gives a role above their own or manages a user ranked above them (403).',
  renameSiteUser:
    "Demoting the last owner answers 409 `Conflict`. The new role takes effect on the user's next request. Site server only. " +
    'Nobody gives a role above their own or manages a user ranked above them (403).',
  setSiteUserPin:
    '204. Every access and refresh token the user held stops working. Site server only. Nobody gives a role above their own or manages a user ranked above ' +
    'them (403).',
  removeSiteUser:
    '204; their tokens stop working at once. The last owner cannot be removed (409 `Conflict`). Site server only. ' +
    'Nobody gives a role above their own or manages a user ranked above them (403).',
  unlockSignIn:
    "Site server only. Ends the lock that repeated wrong PINs put on the user's e-mail (423 `PinLocked` at sign-in) and resets its failure count, so the " +
    'rightful user can sign in at once; the client-address throttle is untouched. Recorded in the audit log as `site_user.unlocked`. ' +
    'An absent or foreign user answers the uniform 404. No body.',
}
