import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { actorOf } from '../../auth/principal.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  CoordinationQuery, CoordinationSchema, CreateNodeBody, DeleteEdgeQuery, DeleteNodeQuery, EdgeBody, EdgePage, EdgeSchema, IslandsSchema,
  IsolatedSchema, ListEdgesQuery, ListNodesQuery, LoopsQuery, LoopsSchema, NetworkBody, NetworkReplacedSchema, NetworkSchema,
  NodePage, NodeParams, NodeSchema, PandapowerQuery, PandapowerSchema, SiteParams, SupplyPathsSchema, TripTimeQuery, TripTimeSchema,
  UpdateNodeBody,
} from './schemas.ts'
import { NetworkBodyEmpty } from './errors.ts'
import type { ElectricalService } from './service.ts'

const READ = 'Policy: members read (cloud: organisation role; site server: site role).'
const WRITE = 'Policy: admins and owners (cloud: organisation role; site server: site role); members get 403.'
const SITE_404 = 'An unknown site, or one of another organisation, is the uniform 404.'
const NODE_404 = 'An unknown site or node (or another organisation\'s) is the uniform 404.'
const TAGS = ['Electrical network']
const NO_CONTENT = { type: 'null', description: 'Done; no body.' }
// Path parameters of the streamed route, coerced like every other route's (http/validation.ts).
const paramsValidator = new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true })

export const electricalRoutes: FastifyPluginAsyncTypebox<{ electrical: ElectricalService }> = async (app, { electrical }) => {
  app.post('/:siteId/electrical/nodes', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Create a node',
      description: `Spec 2.5: \`id\` (1 to 50 characters, unique in the site: 409 otherwise), \`name\` (1 to 200) and \`nodeType\` required. Physical quantities are finite and ≥ 0 (400 naming the field). \`tagBindings\` and \`metadata\` can only be set here. ${SITE_404} ${WRITE}`,
      params: SiteParams, body: CreateNodeBody, response: { 201: NodeSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await electrical.createNode(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)))

  app.get('/:siteId/electrical/nodes', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'List nodes', description: `Paged, ordered by id; optionally of one \`nodeType\`. ${SITE_404} ${READ}`,
      params: SiteParams, querystring: ListNodesQuery, response: { 200: NodePage, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => electrical.listNodes(request.principal.orgId, request.params.siteId, request.query))

  app.get('/:siteId/electrical/nodes/:nodeId', {
    config: { policy: 'member' },
    schema: { tags: TAGS, summary: 'Read a node', description: `${NODE_404} ${READ}`, params: NodeParams, response: { 200: NodeSchema, ...problemResponses(401, 403, 404, 429) } },
  }, async (request) => electrical.getNode(request.principal.orgId, request.params.siteId, request.params.nodeId))

  app.put('/:siteId/electrical/nodes/:nodeId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Update a node',
      description: `Spec 2.5: only the fields present change; a null clears a nullable field. \`id\` is not updatable and \`tagBindings\`/\`metadata\` are create-only: sending any of them is a 400 naming it, and nothing changes. ${NODE_404} ${WRITE}`,
      params: NodeParams, body: UpdateNodeBody, response: { 200: NodeSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => electrical.updateNode(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.nodeId, request.body))

  app.delete('/:siteId/electrical/nodes/:nodeId', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Delete a node',
      description: `A node still connected by edges is refused with 409 \`Conflict\` (\`edgeCount\` says how many) unless \`cascade=true\`, which deletes those edges in the same transaction. ${NODE_404} ${WRITE}`,
      params: NodeParams, querystring: DeleteNodeQuery, response: { 204: NO_CONTENT, ...problemResponses(400, 401, 403, 404, 409, 429) },
    },
  }, async (request, reply) => {
    await electrical.deleteNode(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.nodeId, request.query.cascade ?? false)
    return reply.code(204).send(null)
  })

  app.post('/:siteId/electrical/edges', {
    config: { policy: 'admin', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Create an edge',
      description: `Spec 2.6. Both ends must be nodes of the site (422 naming the end otherwise); a self-loop is refused (422); the triple (sourceId, targetId, edgeType) is the edge's identity, so a repeat is a 409. Direction is kept as given (topology ignores it). ${SITE_404} ${WRITE}`,
      params: SiteParams, body: EdgeBody, response: { 201: EdgeSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await electrical.createEdge(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)))

  app.get('/:siteId/electrical/edges', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'List edges', description: `Paged, ordered by (sourceId, targetId, edgeType); \`nodeId\` keeps the edges touching one node. ${SITE_404} ${READ}`,
      params: SiteParams, querystring: ListEdgesQuery, response: { 200: EdgePage, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => electrical.listEdges(request.principal.orgId, request.params.siteId, request.query))

  app.delete('/:siteId/electrical/edges', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Delete an edge',
      description: `Spec 4.2: the edge is named by \`source\`, \`target\` and \`type\`, all three required (400 naming a missing one). 204, or the uniform 404 when the site or the edge does not exist. ${WRITE}`,
      params: SiteParams, querystring: DeleteEdgeQuery, response: { 204: NO_CONTENT, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    await electrical.deleteEdge(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.query)
    return reply.code(204).send(null)
  })

  app.get('/:siteId/electrical/network', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Read the whole network', description: `Every node (by id) and edge (by source, target, type) in one document: the body \`PUT …/network\` accepts, apart from the read-only fields. ${SITE_404} ${READ}`,
      params: SiteParams, response: { 200: NetworkSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => electrical.getNetwork(request.principal.orgId, request.params.siteId))

  // The bulk load reads its body as it arrives (service/network-load.ts): in its own context, JSON is handed over
  // as the raw stream, unparsed and without the global body limit; the document's own bounds apply.
  await app.register(async (plain) => {
    const streamed = plain.withTypeProvider<TypeBoxTypeProvider>()
    streamed.removeAllContentTypeParsers()
    streamed.addContentTypeParser('application/json', { bodyLimit: Number.MAX_SAFE_INTEGER }, (_request, payload, done) => done(null, payload))
    const { maxBytes, maxNodes, maxEdges } = electrical.networkLoadLimits
    streamed.put('/:siteId/electrical/network', {
      config: { policy: 'admin' },
      // The document is validated element by element while it streams, with the same schemas (NetworkBody documents it).
      validatorCompiler: ({ schema, httpPart }) => (httpPart === 'body' ? () => true : paramsValidator.compile(schema)),
      schema: {
        tags: TAGS, summary: 'Replace the whole network (streamed bulk load)',
        description: `For integrators who keep the network in another tool: \`{ nodes: [node create bodies], edges: [edge bodies] }\` (\`application/json\`) replaces the site's network atomically — all or nothing. `
          + `The body is streamed: parsed as it arrives and staged in chunks, in constant memory whatever its size; edges may come before nodes. `
          + `Bounds (configurable): at most ${maxBytes} bytes (\`SITEGRID_NETWORK_MAX_BYTES\`), ${maxNodes} nodes (\`SITEGRID_NETWORK_MAX_NODES\`) and ${maxEdges} edges (\`SITEGRID_NETWORK_MAX_EDGES\`): one more is a 413 naming the limit; the global body limit does not apply here. `
          + `Each element is checked like \`POST …/nodes\` and \`POST …/edges\`: field rules give a 400 listing each field (\`/nodes/3/ratedCurrentA\`, up to 100 problems, after which the body is read no further); broken JSON, an empty body or a connection closed early is a 400 \`MalformedBody\`; `
          + `graph rules (duplicate ids, unknown ends, self-loops, repeated triples) a 422 listing each problem. A refused or interrupted load changes nothing. Nodes whose id existed keep their createdAt. ${SITE_404} ${WRITE}`,
        params: SiteParams, body: NetworkBody, response: { 200: NetworkReplacedSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429) },
      },
    }, async (request, reply) => {
      const body: unknown = request.body
      if (!(body instanceof Readable)) throw new NetworkBodyEmpty('application/json')
      try {
        return await electrical.replaceNetwork(request.principal.orgId, actorOf(request.principal), request.params.siteId, body)
      } catch (err) {
        // A refusal before the whole body arrived: the rest is dropped and the connection not reused.
        if (!request.raw.readableEnded) reply.header('connection', 'close')
        throw err
      }
    })
  })

  app.get('/:siteId/electrical/topology/islands', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Islands (connected components)', description: `Direction ignored; each island lists its nodes and supplies (UtilitySupply, Generator, UpsBattery), largest first. ${SITE_404} ${READ}`,
      params: SiteParams, response: { 200: IslandsSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => electrical.islands(request.principal.orgId, request.params.siteId))

  app.get('/:siteId/electrical/topology/loops', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Loops in a network meant to be radial', description: `\`isRadial\` and each independent loop with the edge that closes it (the candidate normally-open point). Parallel edges between two nodes form a loop. ${SITE_404} ${READ}`,
      params: SiteParams, querystring: LoopsQuery, response: { 200: LoopsSchema, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => electrical.loops(request.principal.orgId, request.params.siteId, request.query.maxLoops))

  app.get('/:siteId/electrical/topology/isolated', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Nodes with no connection', description: `${SITE_404} ${READ}`,
      params: SiteParams, response: { 200: IsolatedSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => electrical.isolated(request.principal.orgId, request.params.siteId))

  app.get('/:siteId/electrical/nodes/:nodeId/supply-paths', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Paths from a node back to its supplies', description: `One shortest path (by hops, direction ignored) to each supply reachable from the node, nearest first; \`isSupplied\` false and no path when none is. ${NODE_404} ${READ}`,
      params: NodeParams, response: { 200: SupplyPathsSchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => electrical.supplyPaths(request.principal.orgId, request.params.siteId, request.params.nodeId))

  app.get('/:siteId/electrical/nodes/:nodeId/trip-time', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Trip time of the node\'s protection for a fault current',
      description: `Uses the node's \`protectionCurve\`, \`protectionPickupA\` (Is) and \`protectionTms\`. IEC 60255-151: t = TMS·k/((I/Is)^α − 1) with SI k 0.14 α 0.02, VI 13.5/1, EI 80/2, LTI 120/1; IEEE C37.112: t = TD·(A/((I/Is)^p − 1) + B) with MI 0.0515/0.02/0.114, VI 19.61/2/0.491, EI 28.2/2/0.1217; DT: t = TMS seconds. At or below pickup \`trips\` is false and \`tripTimeS\` null. A node without a usable curve, pickup > 0 and TMS > 0: 422. ${NODE_404} ${READ}`,
      params: NodeParams, querystring: TripTimeQuery, response: { 200: TripTimeSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
    },
  }, async (request) => electrical.tripTime(request.principal.orgId, request.params.siteId, request.params.nodeId, request.query.faultCurrentA))

  app.get('/:siteId/electrical/nodes/:nodeId/coordination', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Protection coordination along the node\'s supply path',
      description: `For a fault at the node, walks the supply path (nearest supply, or \`supplyId\`) and tabulates each protective device met, fault end first: curve, pickup, TMS, multiple, trip time, the margin to the next device upstream and a status (\`OK\`, \`Violation\` when the margin is below \`gradingMarginS\`, \`NotTripping\`). Nodes with incomplete settings are listed in \`skipped\`. A node with no supply: 422. ${NODE_404} ${READ}`,
      params: NodeParams, querystring: CoordinationQuery, response: { 200: CoordinationSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
    },
  }, async (request) => electrical.coordination(request.principal.orgId, request.params.siteId, request.params.nodeId, request.query))

  app.get('/:siteId/electrical/export/pandapower', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Export as a pandapower network',
      description: `A file \`pandapower.from_json\` loads (format 3.0.0), for load-flow and short-circuit studies offline. Mapping: UtilitySupply → ext_grid; Generator → gen; PowerTransformer → trafo (IEC 60076-5 minimum vk); CircuitBreaker/FuseSwitch/Disconnector → closed bus-bus switch (CB/LBS/DS) when they have two connections; Switchboard/MCC/VSD/EarthingPoint → bus; Motor → motor; FeederLoad → load; CapacitorBank → shunt; UpsBattery → storage. Cable/OverheadLine → line (length from the fed node's cableLengthM); BusbarLink/TransformerWinding merge their ends into one bus; BusTie → switch. Not exported: impedanceOhms, cableSize, protection settings, tagBindings, metadata. \`envelope=true\` wraps it as \`{ net, notes }\` with every approximation applied. ${SITE_404} ${READ}`,
      params: SiteParams, querystring: PandapowerQuery, response: { 200: PandapowerSchema, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const exported = await electrical.pandapower(request.principal.orgId, request.params.siteId, request.query)
    if (request.query.envelope) return { net: exported.net, notes: exported.notes }
    return reply.header('content-disposition', `attachment; filename="${request.params.siteId.replace(/[^A-Za-z0-9_-]/g, '_')}-pandapower.json"`).send(exported.net)
  })
}
