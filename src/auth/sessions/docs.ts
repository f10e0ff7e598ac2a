/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  startSignIn:
    "Redirects (302) to the identity provider's authorize URL (authorization code with PKCE S256, `state` and `nonce`). " +
    'The pending sign-in is kept server-side for 10 minutes under a `__Host-sitegrid-login` cookie, so the callback must come back to the same browser.',
  finishSignIn:
    'Checks `state` (and `iss`, RFC 9207) against the pending sign-in of this browser, redeems the code with the PKCE verifier, verifies the ID token ' +
    '(`nonce`) and the access token, then creates a NEW server-side session and sets `__Host-sitegrid-session` (HttpOnly, Secure, SameSite=Lax) before ' +
    'redirecting (303) to the `returnTo` given at login. An account unknown to the organisation gets a pending membership request: ' +
    'the session exists, and API calls answer 403 until an owner or admin approves it. A sign-in that cannot be accepted: 400 `SignInFailed`.',
  sessionAccessToken:
    'No body. Answers the access token of the browser session named by the `__Host-sitegrid-session` cookie, refreshed at the provider when less than a ' +
    'minute is left. The console keeps it in memory and calls the API with `Authorization: Bearer`. `Origin` must be this host (403 otherwise). ' +
    'No session, an ended or expired one, or a refresh the provider refuses: the uniform 401. The credential is the session cookie.',
  signOut:
    'No body. Deletes the server-side session (in every process at once) and clears the cookie; 204 whether or not there was a session (idempotent). ' +
    "`Origin` must be this host (403 otherwise). The provider's own session is not ended. The credential is the session cookie, if any.",
}
