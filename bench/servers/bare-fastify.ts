// The framework's own share: Fastify alone (no logger, no hooks, no database) answering the bare server's JSON list
// through a response schema, as every route of the service does. The ceiling any Fastify application can reach.
import Fastify from 'fastify'

const row = {
  keyId: '7f1d8c0e-8d7e-4b8a-9a59-1d8b1d5a9e11',
  keyPrefix: 'csk_AbCd',
  role: 'owner',
  name: 'bench',
  createdByUserId: 'cli',
  createdAt: '2026-11-22T00:00:00.000Z',
  expiresAt: '2026-12-22T00:00:00.000Z',
  lastUsedAt: '2026-11-22T00:00:01.000Z',
}
const item = { type: 'object', properties: Object.fromEntries(Object.keys(row).map((k) => [k, { type: 'string' }])) }
const app = Fastify({ logger: false })
app.get('/api/admin/api-keys', { schema: { response: { 200: { type: 'array', items: item } } } }, async () => [row])
await app.listen({ host: '127.0.0.1', port: 0 })
console.log(JSON.stringify({ port: (app.server.address() as { port: number }).port }))
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
