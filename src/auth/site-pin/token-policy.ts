/**
 * The fixed facts of site-PIN tokens (spec 5 rule 7), documented in README § On-site quick start.
 * The issuer ends in `-local`: that suffix is how the auth selector routes a bearer token to the local validator.
 */
export const SITE_ISSUER = 'sitegrid-site-local'
export const SITE_AUDIENCE = 'sitegrid-site'
export const SIGNING_ALG = 'ES256'
export const ACCESS_TOKEN_TTL_S = 15 * 60
export const CLOCK_TOLERANCE_S = 30
/** One refresh token lives 12 hours (a shift); a sign-in's family at most 7 days, then the PIN is needed again. */
export const REFRESH_TOKEN_TTL_MS = 12 * 3_600_000
export const REFRESH_FAMILY_TTL_MS = 7 * 86_400_000
