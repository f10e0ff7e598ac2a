// The baseline: bare node:http answering a JSON list of the same size as the API-key list.
import { createServer } from 'node:http'

const body = JSON.stringify([
  {
    keyId: '7f1d8c0e-8d7e-4b8a-9a59-1d8b1d5a9e11',
    keyPrefix: 'csk_AbCd',
    role: 'owner',
    name: 'bench',
    createdByUserId: 'cli',
    createdAt: '2026-11-22T00:00:00.000Z',
    expiresAt: '2026-12-22T00:00:00.000Z',
    lastUsedAt: '2026-11-22T00:00:01.000Z',
  },
])
const server = createServer((req, res) => {
  if (req.headers['x-api-key'] === undefined) {
    res.writeHead(401).end()
    return
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body)
})
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as { port: number }).port }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
