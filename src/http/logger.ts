import { pino, type DestinationStream, type Logger } from 'pino'

/** Every credential header and secret-bearing field is censored before a line is written. */
export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]',
  '*.plaintext', '*.pin', '*.password', '*.secret', '*.keySecret', '*.verifier', '*.token', '*.apiKey',
  '*.access_token', '*.refresh_token', '*.id_token', '*.client_secret', '*.refreshToken', '*.accessToken',
]

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // Query strings of sign-in callbacks carry codes and state: log the path only there.
      req: (req: { method?: string; url?: string; hostname?: string }) => ({
        method: req.method,
        url: req.url?.startsWith('/auth/') ? req.url.split('?')[0] : req.url,
        host: req.hostname,
      }),
    },
  }, destination)
}
