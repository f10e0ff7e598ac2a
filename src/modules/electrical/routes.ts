import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { actorOf } from '../../identity.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  CoordinationQuery,
  CoordinationSchema,
  CreateNodeBody,
  DeleteEdgeQuery,
  DeleteNodeQuery,
  EdgeBody,
  EdgePage,
  EdgeSchema,
  IslandsSchema,
  IsolatedSchema,
  ListEdgesQuery,
  ListNodesQuery,
  LoadFlowQuery,
  LoadFlowSchema,
  LoopsQuery,
  LoopsSchema,
  NetworkBody,
  NetworkReplacedSchema,
  NetworkSchema,
  NodePage,
  NodeParams,
  NodeSchema,
  PandapowerQuery,
  PandapowerSchema,
  ProtectionCurvesQuery,
  ProtectionCurvesSchema,
  ShortCircuitQuery,
  ShortCircuitSchema,
  SiteParams,
  SupplyPathsSchema,
  TripTimeQuery,
  TripTimeSchema,
  UpdateNodeBody,
} from './schemas.ts'
import { NetworkBodyEmpty } from './errors.ts'
import type { ElectricalService } from './service.ts'
import { docs } from './docs.ts'
import { attachment, withHeaders } from '../../http/openapi.ts'

const TAGS = ['Electrical network']
const NO_CONTENT = { type: 'null', description: 'Done; no body.' }
// Path parameters of the streamed route, coerced like every other route's (http/validation.ts).
const paramsValidator = new Ajv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true })

export const electricalRoutes: FastifyPluginAsyncTypebox<{ electrical: ElectricalService }> = async (app, { electrical }) => {
  app.post(
    '/:siteId/electrical/nodes',
    {
      config: { policy: 'admin', idempotent: true },
      schema: {
        tags: TAGS,
        operationId: 'createNode',
        summary: 'Create a node',
        description: docs.createNode,
        params: SiteParams,
        body: CreateNodeBody,
        response: { 201: NodeSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await electrical.createNode(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)),
  )

  app.get(
    '/:siteId/electrical/nodes',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listNodes',
        summary: 'List nodes',
        description: docs.listNodes,
        params: SiteParams,
        querystring: ListNodesQuery,
        response: { 200: NodePage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => electrical.listNodes(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/electrical/nodes/:nodeId',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getNode',
        summary: 'Read a node',
        description: docs.readNode,
        params: NodeParams,
        response: { 200: NodeSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => electrical.getNode(request.principal.orgId, request.params.siteId, request.params.nodeId),
  )

  app.put(
    '/:siteId/electrical/nodes/:nodeId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'updateNode',
        summary: 'Update a node',
        description: docs.updateNode,
        params: NodeParams,
        body: UpdateNodeBody,
        response: { 200: NodeSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
    async (request) => electrical.updateNode(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.nodeId, request.body),
  )

  app.delete(
    '/:siteId/electrical/nodes/:nodeId',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'deleteNode',
        summary: 'Delete a node',
        description: docs.deleteNode,
        params: NodeParams,
        querystring: DeleteNodeQuery,
        response: { 204: NO_CONTENT, ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request, reply) => {
      await electrical.deleteNode(
        request.principal.orgId,
        actorOf(request.principal),
        request.params.siteId,
        request.params.nodeId,
        request.query.cascade ?? false,
      )
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/:siteId/electrical/edges',
    {
      config: { policy: 'admin', idempotent: true },
      schema: {
        tags: TAGS,
        operationId: 'createEdge',
        summary: 'Create an edge',
        description: docs.createEdge,
        params: SiteParams,
        body: EdgeBody,
        response: { 201: EdgeSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await electrical.createEdge(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body)),
  )

  app.get(
    '/:siteId/electrical/edges',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listEdges',
        summary: 'List edges',
        description: docs.listEdges,
        params: SiteParams,
        querystring: ListEdgesQuery,
        response: { 200: EdgePage, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => electrical.listEdges(request.principal.orgId, request.params.siteId, request.query),
  )

  app.delete(
    '/:siteId/electrical/edges',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'deleteEdge',
        summary: 'Delete an edge',
        description: docs.deleteEdge,
        params: SiteParams,
        querystring: DeleteEdgeQuery,
        response: { 204: NO_CONTENT, ...problemResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      await electrical.deleteEdge(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.query)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:siteId/electrical/network',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getNetwork',
        summary: 'Read the whole network',
        description: docs.readNetwork,
        params: SiteParams,
        response: { 200: NetworkSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => electrical.getNetwork(request.principal.orgId, request.params.siteId),
  )

  // The bulk load reads its body as it arrives (service/network-load.ts): in its own context, JSON is handed over
  // as the raw stream, unparsed and without the global body limit; the document's own bounds apply.
  await app.register(async (plain) => {
    const streamed = plain.withTypeProvider<TypeBoxTypeProvider>()
    streamed.removeAllContentTypeParsers()
    streamed.addContentTypeParser('application/json', { bodyLimit: Number.MAX_SAFE_INTEGER }, (_request, payload, done) => done(null, payload))
    streamed.put(
      '/:siteId/electrical/network',
      {
        config: { policy: 'admin' },
        // The document is validated element by element while it streams, with the same schemas (NetworkBody documents it).
        validatorCompiler: ({ schema, httpPart }) => (httpPart === 'body' ? () => true : paramsValidator.compile(schema)),
        schema: {
          tags: TAGS,
          operationId: 'replaceNetwork',
          summary: 'Replace the whole network (streamed bulk load)',
          description: docs.replaceNetwork(electrical.networkLoadLimits),
          params: SiteParams,
          body: NetworkBody,
          response: { 200: NetworkReplacedSchema, ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429, 503) },
        },
      },
      async (request) => {
        const body: unknown = request.body
        if (!(body instanceof Readable)) throw new NetworkBodyEmpty('application/json')
        // A refusal before the whole body arrived closes the connection (http/drain.ts).
        return electrical.replaceNetwork(request.principal.orgId, actorOf(request.principal), request.params.siteId, body)
      },
    )
  })

  app.get(
    '/:siteId/electrical/topology/islands',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listIslands',
        summary: 'Islands (connected components)',
        description: docs.islands,
        params: SiteParams,
        response: { 200: IslandsSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => electrical.islands(request.principal.orgId, request.params.siteId),
  )

  app.get(
    '/:siteId/electrical/topology/loops',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listLoops',
        summary: 'Loops in a network meant to be radial',
        description: docs.loops,
        params: SiteParams,
        querystring: LoopsQuery,
        response: { 200: LoopsSchema, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => electrical.loops(request.principal.orgId, request.params.siteId, request.query.maxLoops),
  )

  app.get(
    '/:siteId/electrical/topology/isolated',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listIsolatedNodes',
        summary: 'Nodes with no connection',
        description: docs.isolatedNodes,
        params: SiteParams,
        response: { 200: IsolatedSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => electrical.isolated(request.principal.orgId, request.params.siteId),
  )

  app.get(
    '/:siteId/electrical/nodes/:nodeId/supply-paths',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listSupplyPaths',
        summary: 'Paths from a node back to its supplies',
        description: docs.supplyPaths,
        params: NodeParams,
        response: { 200: SupplyPathsSchema, ...problemResponses(401, 403, 404, 429) },
      },
    },
    async (request) => electrical.supplyPaths(request.principal.orgId, request.params.siteId, request.params.nodeId),
  )

  app.get(
    '/:siteId/electrical/nodes/:nodeId/trip-time',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getTripTime',
        summary: "Trip time of the node's protection for a fault current",
        description: docs.tripTime,
        params: NodeParams,
        querystring: TripTimeQuery,
        response: { 200: TripTimeSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => electrical.tripTime(request.principal.orgId, request.params.siteId, request.params.nodeId, request.query),
  )

  app.get(
    '/:siteId/electrical/nodes/:nodeId/coordination',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getCoordination',
        summary: "Protection coordination along the node's supply path",
        description: docs.protectionCoordination,
        params: NodeParams,
        querystring: CoordinationQuery,
        response: { 200: CoordinationSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => electrical.coordination(request.principal.orgId, request.params.siteId, request.params.nodeId, request.query),
  )

  app.get(
    '/:siteId/electrical/nodes/:nodeId/protection-curves',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getProtectionCurves',
        summary: "Time–current curves of the protective devices on the node's supply path",
        description: docs.protectionCurves,
        params: NodeParams,
        querystring: ProtectionCurvesQuery,
        response: { 200: ProtectionCurvesSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => electrical.protectionCurves(request.principal.orgId, request.params.siteId, request.params.nodeId, request.query),
  )

  app.get(
    '/:siteId/electrical/studies/short-circuit',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getShortCircuitStudy',
        summary: 'Short-circuit currents at every bus (IEC 60909)',
        description: docs.shortCircuit,
        params: SiteParams,
        querystring: ShortCircuitQuery,
        response: { 200: ShortCircuitSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => electrical.shortCircuit(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/electrical/studies/load-flow',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getLoadFlowStudy',
        summary: 'Load flow: bus voltages, branch flows, losses and loading (Newton–Raphson)',
        description: docs.loadFlow,
        params: SiteParams,
        querystring: LoadFlowQuery,
        response: { 200: LoadFlowSchema, ...problemResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request) => electrical.loadFlow(request.principal.orgId, request.params.siteId),
  )

  app.get(
    '/:siteId/electrical/export/pandapower',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'exportPandapower',
        summary: 'Export as a pandapower network',
        description: docs.exportPandapowerNetwork,
        params: SiteParams,
        querystring: PandapowerQuery,
        response: { 200: withHeaders(PandapowerSchema, attachment('{siteId}-pandapower.json')), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const exported = await electrical.pandapower(request.principal.orgId, request.params.siteId, request.query)
      if (request.query.envelope) return { net: exported.net, notes: exported.notes }
      return reply
        .header('content-disposition', `attachment; filename="${request.params.siteId.replace(/[^A-Za-z0-9_-]/g, '_')}-pandapower.json"`)
        .send(exported.net)
    },
  )
}
