/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  edgeConfig:
    "Everything an edge gateway needs to poll its controllers: each assigned controller's connection settings, checked CIP route and " +
    'instances with their tag mappings. Answered with `ETag: "<version>"`; send it back as `If-None-Match` and an unchanged ' +
    'configuration answers 304 with no body, after one indexed read (poll every few seconds). The version moves with any change to ' +
    "the site's controllers or instances (an edit elsewhere in the site also moves it: the gateway then fetches the same configuration " +
    'once more). An edge exists through its assignments: one with no controller assigned answers 404, like an unknown site. ' +
    'Use a key restricted to the site (`siteId` at mint).',
  putEdgeStatus:
    "A gateway's heartbeat: its software version, whether it is faulted, and for each controller it polls the communication state " +
    '(`ok` or `failed`), the last good poll and the error count. Stored as the latest per gateway and per controller (a heartbeat ' +
    'overwrites the previous one; no log), so sending the same heartbeat again changes nothing but the time heard. A controller not ' +
    'assigned to this gateway is refused in `results` (`ControllerNotOnEdge`) and never fails the others; one reported twice is a 400. ' +
    'A controller reported `failed` gets a `COMM_LOSS` alarm (priority high, `instanceId` its controller id, raised by `system`), one ' +
    "reported `ok` again has it cleared (returned to normal), through the alarms' own rules (one open alarm per source). Send one every " +
    'few seconds, well within `SITEGRID_EDGE_STALE_AFTER_MS` (default 60 s). A gateway with no controller assigned answers 404. ' +
    "A site's heartbeats and stale sweeps take turns in the server process; when `SITEGRID_EDGE_STATUS_QUEUE_MAX` (default 1000) " +
    'already wait there, the heartbeat answers 503 `ServiceUnavailable` with `Retry-After` at once and stores nothing.',
  getEdgeStatus:
    "A gateway's state and its assigned controllers'. A gateway is `stale` with no heartbeat within `staleAfterMs` (or none yet), " +
    '`faulted` when its last heartbeat says so or any of its controllers is `faulted`, `online` otherwise; stale wins over faulted. A ' +
    'controller is `stale` when this gateway has not reported it within `staleAfterMs`, `faulted` when reported `failed`, `online` when ' +
    'reported `ok`. A controller that was reported and then goes stale gets a `COMM_LOSS` alarm, dated when it went stale (a sweep ' +
    'every quarter of the stale time, and every read of these routes, raise it); its next `ok` report clears it, and so does that ' +
    'sweep once the controller is deleted or taken off the gateway (the alarm returns to normal: acknowledged, it closes). ' +
    "The read's sweep takes the site's turn as a heartbeat does: 503 `ServiceUnavailable` with `Retry-After` when the process's turns are full.",
  listEdgeStatus: 'Every gateway of the site with at least one controller assigned, by edge id, each as `GET …/edges/{edgeId}/status` answers it.',
}
