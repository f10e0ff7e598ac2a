/**
 * Controller `platform` codes (spec 2.3 allows 0 to 6 and leaves their meaning open; these are ours, documented
 * in the OpenAPI document). A platform is the PLC family; the wire protocol is `connection.protocol`.
 */
export const PLATFORMS = [
  { code: 0, name: 'Generic', description: 'unspecified or other vendor; polled by whatever `connection.protocol` says' },
  {
    code: 1,
    name: 'RockwellLogix',
    description: 'Allen-Bradley ControlLogix, CompactLogix, GuardLogix, Micro800 over CIP/EtherNet-IP (symbolic tags, `cipPath` routes)',
  },
  {
    code: 2,
    name: 'RockwellPlc5Slc',
    description: 'Allen-Bradley PLC-5, SLC 500, MicroLogix: PCCC data-table addresses (N7:0) over EtherNet/IP or DF1 gateways',
  },
  { code: 3, name: 'SiemensS7', description: 'Siemens SIMATIC S7-300/400/1200/1500 over S7comm (ISO-on-TCP, port 102)' },
  { code: 4, name: 'ModbusTcp', description: 'any Modbus TCP device (Schneider Modicon, drives, meters, RTUs): registers and coils, port 502' },
  { code: 5, name: 'OpcUa', description: "an OPC UA server (a PLC's embedded server or a gateway such as Kepware or Ignition), port 4840" },
  { code: 6, name: 'SchneiderModicon', description: 'Schneider Electric Modicon M340/M580/Quantum over its native Unity/UMAS services' },
] as const

export const PLATFORM_CODES = PLATFORMS.map((p) => p.code)

export function platformName(code: number): string {
  return PLATFORMS.find((p) => p.code === code)?.name ?? 'Unknown'
}

/** Protocol names (compared without case, spaces, `-`, `/` or `_`) that speak CIP and take a `cipPath` route. */
const CIP_PROTOCOLS = new Set(['cip', 'enip', 'eip', 'ethernetip', 'cipethernetip', 'logix', 'abeip', 'pccc', 'pcccethernetip'])

export function normaliseProtocol(protocol: string): string {
  return protocol.toLowerCase().replace(/[\s./_-]+/g, '')
}

export function isCipProtocol(protocol: string): boolean {
  return CIP_PROTOCOLS.has(normaliseProtocol(protocol))
}

/** Well-known TCP ports used when `connection.port` is not given. */
const DEFAULT_PORTS: Record<string, number> = {
  cip: 44818,
  enip: 44818,
  eip: 44818,
  ethernetip: 44818,
  cipethernetip: 44818,
  logix: 44818,
  abeip: 44818,
  pccc: 44818,
  pcccethernetip: 44818,
  modbus: 502,
  modbustcp: 502,
  s7: 102,
  s7comm: 102,
  isoontcp: 102,
  opcua: 4840,
  opctcp: 4840,
  umas: 502,
}

export function defaultPort(protocol: string): number | null {
  return DEFAULT_PORTS[normaliseProtocol(protocol)] ?? null
}

/** Protocol names recognised above, for the schema description. */
export const KNOWN_PROTOCOLS_TEXT =
  'CIP protocols (`cip`, `EtherNet/IP`, `enip`, `eip`, `logix`, `pccc`, any case) take a checked `cipPath`; ' +
  'default ports: CIP 44818, `modbus`/`modbus-tcp` 502, `s7`/`s7comm` 102, `opc-ua`/`opc.tcp` 4840'
