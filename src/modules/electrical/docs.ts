import type { NetworkLoadLimits } from './service/network-load.ts'
import { MAX_STUDIED_DEVICES } from './protection.ts'
import { MAX_ELIMINATION_WORK } from './studies/load-flow-sparse.ts'
import { MAX_LISTED_CONTRIBUTIONS, MAX_SOURCE_SHARES } from './studies/short-circuit.ts'

const SITE_404 = 'An unknown site, or one of another organisation, is the uniform 404.'
const NODE_404 = "An unknown site or node (or another organisation's) is the uniform 404."

const FAULT_CURRENT =
  "The fault current: `faultCurrentA` when given (it wins), else the short-circuit study's I″k max at the bus of the node (IEC 60909, its default " +
  'options), computed per network version; when the study lacks data, 422 `StudyDataMissing` naming each node and parameter, and a node the study ' +
  'has no bus for (fed only by a UPS) is a 422 asking for `faultCurrentA`. `faultCurrentSource` says which. The study gives the currents of ' +
  `at most ${MAX_STUDIED_DEVICES} protective devices on the path: more is a 422 (\`deviceCount\`, \`maxDevices\`), or with \`faultCurrentA\` ` +
  'typed they are graded without the minimum-fault checks (`minimumFaultCheck.checked` false, its `detail` saying why). With the computed current each ' +
  "device sees its own branch current from the study's fault state (maximum case): a motor or other source on the fault's side of a device feeds the " +
  'fault past it, so the device carries less than the bus current (`currentRatio` = its current over the fault current; on the HV side of a ' +
  'transformer the current that winding carries). A typed current is referred through every transformer between the device and the fault by the ' +
  "transformer's rated voltage ratio (`currentRatio`: I·UrLV/UrHV on the HV side of an LV fault), every device carrying all of it; a missing " +
  'hvRatedVoltageKv/lvRatedVoltageKv there is a 422 naming it (typed or computed). A device on a transformer node measures on its supply side, and ' +
  'a fault at a transformer node is at its supply-side terminals.'

/** The elimination-work bound of both studies (studies/load-flow-sparse.ts, MAX_ELIMINATION_WORK). */
const TOO_MESHED =
  'a network too meshed for the sparse solver: a 422 `UnprocessableEntity` (`rule: "network too meshed"`, with `busCount`, `branchCount`, ' +
  `\`eliminatedBuses\`, \`fillBlocks\`, \`eliminationWork\` and \`maxEliminationWork\`) once eliminating its buses passes ${MAX_ELIMINATION_WORK} operations ` +
  "(the sum over the buses of the square of each one's remaining neighbours, fill-in included, when it is eliminated), refused while the buses " +
  'are ordered, before any factorisation, and nothing kept. Radial networks with rings, as plants are, need 1.3 to 1.5 a bus (up to the ' +
  '100 000 nodes of the network limits), a full 50 × 50 grid 1.2 million; a random mesh of 6 branches a bus is refused from about 550 buses ' +
  '(at 2 000 buses it would need 110 million, minutes of work)'

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  createNode:
    `Spec 2.5: \`id\` (1 to 50 characters, unique in the site: 409 otherwise), \`name\` (1 to 200) and \`nodeType\` required. ` +
    `Physical quantities are finite and ≥ 0 (400 naming the field). \`tagBindings\` and \`metadata\` can only be set here. ` +
    `\`study\` holds the study parameters of the node's type (a parameter of another type: 400 naming \`/study/<name>\`). ${SITE_404}`,
  listNodes: `Paged, ordered by id; optionally of one \`nodeType\`. ${SITE_404}`,
  readNode: NODE_404,
  updateNode:
    `Spec 2.5: only the fields present change; a null clears a nullable field. \`id\` is not updatable and \`tagBindings\`/\`metadata\` are create-only: ` +
    `sending any of them is a 400 naming it, and nothing changes. \`study\` replaces the stored study parameters whole (null clears them); they must ` +
    `fit the node's type, also when \`nodeType\` changes (400 naming \`/study/<name>\`). ${NODE_404}`,
  deleteNode:
    `A node still connected by edges is refused with 409 \`Conflict\` (\`edgeCount\` says how many) unless \`cascade=true\`, which deletes those edges in ` +
    `the same transaction. ${NODE_404}`,
  createEdge:
    `Spec 2.6. Both ends must be nodes of the site (422 naming the end otherwise); a self-loop is refused (422); ` +
    `the triple (sourceId, targetId, edgeType) is the edge's identity, so a repeat is a 409. Direction is kept as given (topology ignores it). ${SITE_404}`,
  listEdges: `Paged, ordered by (sourceId, targetId, edgeType); \`nodeId\` keeps the edges touching one node. ${SITE_404}`,
  deleteEdge:
    'Spec 4.2: the edge is named by `source`, `target` and `type`, all three required (400 naming a missing one). ' +
    '204, or the uniform 404 when the site or the edge does not exist.',
  readNetwork:
    `Every node (by id) and edge (by source, target, type) in one document: the body \`PUT …/network\` accepts, ` +
    `apart from the read-only fields. ${SITE_404}`,
  replaceNetwork: ({ maxBytes, maxNodes, maxEdges }: NetworkLoadLimits) =>
    'For integrators who keep the network in another tool: `{ nodes: [node create bodies], edges: [edge bodies] }` (`application/json`) replaces ' +
    "the site's network atomically — all or nothing. The body is streamed: parsed as it arrives and staged in chunks, in constant memory whatever " +
    `its size; edges may come before nodes. Bounds (configurable): at most ${maxBytes} bytes (\`SITEGRID_NETWORK_MAX_BYTES\`), ${maxNodes} nodes ` +
    `(\`SITEGRID_NETWORK_MAX_NODES\`) and ${maxEdges} edges (\`SITEGRID_NETWORK_MAX_EDGES\`): one more is a 413 naming the limit; the global body ` +
    'limit does not apply here. Each element is checked like `POST …/nodes` and `POST …/edges`: field rules give a 400 listing each field ' +
    '(`/nodes/3/ratedCurrentA`, up to 100 problems, after which the body is read no further); broken JSON, an empty body or a connection closed ' +
    'early is a 400 `MalformedBody`; graph rules (duplicate ids, unknown ends, self-loops, repeated triples) a 422 listing each problem. ' +
    `A refused or interrupted load changes nothing. Nodes whose id existed keep their createdAt. ${SITE_404}`,
  islands: `Direction ignored; each island lists its nodes and supplies (UtilitySupply, Generator, UpsBattery), largest first. ${SITE_404}`,
  loops:
    `\`isRadial\` and each independent loop with the edge that closes it (the candidate normally-open point). Parallel edges between two nodes form a loop. ` +
    `Loops are listed in edge order up to \`maxLoops\` and while the node ids listed over them stay within 100000 (the first loop always, whole); ` +
    `\`isTruncated\` says some were left out, \`loopCount\` counts them all. ${SITE_404}`,
  isolatedNodes: SITE_404,
  supplyPaths:
    `One shortest path (by hops, direction ignored) to each supply reachable from the node, nearest first; \`isSupplied\` false and no path when none is. ` +
    `At most 1000 paths and 100000 node ids over all paths are listed (the nearest path always, whole): when more supplies are reachable, the ` +
    `nearest are listed, \`isTruncated\` is true and \`supplyCount\` counts every supply reached; both are absent from a whole answer. ${NODE_404}`,
  tripTime:
    `Uses the node's \`protectionCurve\`, \`protectionPickupA\` (Is) and \`protectionTms\`. IEC 60255-151: ` +
    `t = TMS·k/((I/Is)^α − 1) with SI k 0.14 α 0.02, VI 13.5/1, EI 80/2, LTI 120/1; IEEE C37.112: ` +
    `t = TD·(A/((I/Is)^p − 1) + B) with MI 0.0515/0.02/0.114, VI 19.61/2/0.491, EI 28.2/2/0.1217; DT: t = TMS seconds. ` +
    `At or below pickup \`trips\` is false and \`tripTimeS\` null. A node without a usable curve, pickup > 0 and TMS > 0: 422. ` +
    `${FAULT_CURRENT} Here the fault is at the node itself, towards its nearest supply. ${NODE_404}`,
  protectionCoordination:
    `For a fault at the node, walks the supply path (nearest supply, or \`supplyId\`) and tabulates each protective device met, fault end first: ` +
    `curve, pickup, TMS, multiple, trip time, the margin to the next device upstream and a status (\`OK\`, \`Violation\` when the margin is below ` +
    `\`gradingMarginS\`, \`NotTripping\`). Nodes with incomplete settings are listed in \`skipped\`. A node with no supply: 422. ${FAULT_CURRENT} ` +
    `Minimum-fault check: a device's protected zone runs from it towards the fault as far as the next protective device (which protects the ` +
    `rest), so its end is that device's bus, or the faulted node's for the device nearest the fault; \`pickupAboveMinFault\` flags a pickup above ` +
    `the least fault the study computes there (the line-to-line I″k2 min, √3/2 of the three-phase I″k min), referred to the device. With a typed current and a study that cannot run, \`minimumFaultCheck\` says why and ` +
    `the flags are null. ${NODE_404}`,
  protectionCurves:
    `For a time–current (TCC) plot: the protective devices the coordination walks (the path from the node to the nearest supply, or ` +
    `\`supplyId\`; fault end first), each with its trip time at the same \`points\` currents at the fault, log-spaced from \`fromA\` to \`toA\` ` +
    `(default the lowest pickup to 30 × the highest, referred to the fault's side), and \`faultCurrentA\` to mark. Every time is the trip-time ` +
    `read's own value at the current the device sees (× \`currentRatio\`; null at or below pickup), so the drawn curves are the ones the ` +
    `coordination grades, on one current axis. ${FAULT_CURRENT} Nodes with incomplete settings are listed in \`skipped\`. \`toA\` not above \`fromA\`: 400 naming \`toA\`. ` +
    `A node with no supply: 422. ${NODE_404}`,
  shortCircuit:
    'Issue 31: three-phase and line-to-line short-circuit currents at every bus by IEC 60909-0 (equivalent voltage source, c-factors of Table 1, KT for transformers, ' +
    "KG for generators, κ from R/X in radial parts and by method C in meshed ones, motors in the maximum case only), with the sources' contributions " +
    "(each bus's 5 largest by default; `contributions=all` or `none`, `busId` for one bus: a network of 5 000 buses and 200 motors holds 1 000 000) " +
    'and the data assumed. It reads the study parameters of the nodes (`study` object): a missing one is a 422 `StudyDataMissing` listing every ' +
    '`{nodeId, parameter, reason}`, never a default; a network of more than 10 000 energised buses is a 422 (sparse solver: 0.44 s for 5 000 buses with 200 motors on the development machine), so is ' +
    `one of more than ${MAX_SOURCE_SHARES} shares of sources at buses (sources × buses: each share is kept), and \`contributions=all\` without \`busId\` over more than ` +
    `${MAX_LISTED_CONTRIBUTIONS} contributions (buses × sources; the largest of each bus or one bus's are answered), so is ` +
    TOO_MESHED +
    ', and so are equations made singular by the parameters (an impedance of zero or one far out of scale), naming the bus in `busId`. Line-to-line (two-phase) currents are given with Z(2) = Z(1). ' +
    'Line-to-earth currents I″k1 (max and min) are computed at every bus whose zero-sequence part is earthed and complete: the grid by x0x1Ratio and r0x0Ratio, ' +
    'transformers by vectorGroup (YNd and Dyn earth their star side through uk0Percent/ur0Percent plus 3·ZN, YNyn passes zero sequence, the others block it), ' +
    'cables and lines by r0OhmPerKm/x0OhmPerKm (c0NfPerKm optional), generators by neutralEarthing and x0Percent. Missing zero-sequence data is not a 422: ' +
    '`earthFaults` lists the buses left without I″k1 and each node and parameter they lack, and `faultTypes` includes `singlePhaseToEarth` only when a bus has it. ' +
    "The study and its answers without all contributions are kept per network version (an answer with all of them is built for each request): any edit of the site's network computes them again. " +
    SITE_404,
  loadFlow:
    'Issue 31: a Newton–Raphson load flow (polar, sparse LU; tolerance 1e-8 pu on 1 MVA, at most 20 iterations) of the stored network, radial or meshed: ' +
    'per bus the voltage (pu, V) and angle, per branch the power entering at both ends, the currents, the series losses and the loading against ' +
    "the branch's rating, the total losses, and the convergence. Model: buses as the short-circuit study's (closed switching devices and bus ties " +
    'join theirs); each UtilitySupply an ideal slack at its `voltageSetpointPu` (1.0 pu when not given, stated in `assumed.sources`), angle 0; ' +
    'a Generator PV at `activePowerKw` and `voltageSetpointPu` (reactive limits not enforced), or the slack of a part with no utility supply; ' +
    'a Motor drawing ratedPowerKw/efficiency at its powerFactor, a FeederLoad activePowerKw at its powerFactor (both constant power, lagging); ' +
    'a CapacitorBank a shunt of ratedPowerKw kvar at its ratedVoltageV; a cable or line cableLengthM × (rOhmPerKm + j·xOhmPerKm) of the fed node ' +
    '(or the cable table for its cableSize), no charging, rated by its `ampacityA`; a transformer its ukPercent/urPercent (or xrRatio) impedance ' +
    'at the rated ratio ratedPowerKva, hvRatedVoltageKv/lvRatedVoltageKv (no magnetising branch, tap or phase shift); a UPS idle. A missing ' +
    'parameter is a 422 `StudyDataMissing` listing every `{nodeId, parameter, reason}`, never a default. A case with no solution (demand beyond ' +
    'what the network carries) is a 200 with `converged: false`, a `note` naming the reason and the worst bus, and no bus or branch values. ' +
    `There is no cap on the buses (the work besides the elimination grows with the network, which the network limits bound: 50 000 buses in about 1.4 s); ${TOO_MESHED}. ` +
    "The study and its answers without all contributions are kept per network version (an answer with all of them is built for each request): any edit of the site's network computes them again. " +
    SITE_404,
  exportPandapowerNetwork:
    `A file \`pandapower.from_json\` loads (format 3.0.0), for load-flow and short-circuit studies offline. Mapping: UtilitySupply → ext_grid; ` +
    `Generator → gen; PowerTransformer → trafo (IEC 60076-5 minimum vk); CircuitBreaker/FuseSwitch/Disconnector → closed bus-bus switch (CB/LBS/DS) when ` +
    `they have two connections; Switchboard/MCC/VSD/EarthingPoint → bus; Motor → motor; FeederLoad → load; CapacitorBank → shunt; UpsBattery → storage. ` +
    `Cable/OverheadLine → line (length from the fed node's cableLengthM); BusbarLink/TransformerWinding merge their ends into one bus; BusTie → switch. ` +
    `The nodes' study parameters (\`study\`), where set, replace the approximations: ext_grid s_sc_max/min_mva, rx_max/min and vm_pu, line r/x per km ` +
    `(or the cable table's for a readable cableSize) and max_i_ka (ampacityA), trafo sn/vn/vk/vkr and vector group, gen p_mw, vm_pu, x″d, R and cos φ, ` +
    `motor locked-rotor data, load power and power factor, so pandapower's short circuit and load flow on the file answer what ` +
    `\`GET …/studies/short-circuit\` and \`GET …/studies/load-flow\` do. ` +
    `Not exported: impedanceOhms, protection settings, tagBindings, metadata. ` +
    `\`envelope=true\` wraps it as \`{ net, notes }\` with every approximation applied. ${SITE_404}`,
}
