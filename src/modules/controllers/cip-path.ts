import { isIP } from 'node:net'

/**
 * A CIP route (the "path" of RSLinx, pylogix and Ignition): comma-separated pairs of port and link, read left
 * to right from the module the connection enters. `1,0` = out the backplane to slot 0; `2,10.0.0.5,1,0` = out
 * Ethernet port 2 to 10.0.0.5, then over that chassis' backplane to slot 0.
 *
 * Rules we enforce (what trips integrators up):
 * - an even number of items: every port has a link;
 * - a port is a whole number 1 to 65535 (CIP port segment); 0 is reserved;
 * - port 1 is always the backplane, and its link is a slot number 0 to 16 (a 1756 chassis has at most 17 slots);
 * - on any other port (2 and 3 are the Ethernet/ControlNet/DH+ ports of bridge modules) the link is an IPv4
 *   address (Ethernet) or a node number 0 to 255 (ControlNet, DH+, DeviceNet); a host name is not a CIP link;
 * - at most 16 hops.
 */
export interface CipHop {
  port: number
  link: string
  meaning: string
}

export type CipRouteResult = { ok: true; hops: CipHop[]; explanation: string } | { ok: false; message: string }

export const MAX_CIP_HOPS = 16
export const MAX_BACKPLANE_SLOT = 16

export function parseCipPath(path: string): CipRouteResult {
  const trimmed = path.trim()
  if (trimmed === '') return { ok: true, hops: [], explanation: 'Direct: the connection ends at the module at ipAddress (no route).' }
  const items = trimmed.split(',').map((s) => s.trim())
  if (items.length % 2 !== 0) {
    return { ok: false, message: `hop ${Math.ceil(items.length / 2)} ("${items[items.length - 1]}") has a port but no link: a route is pairs of port,link` }
  }
  if (items.length / 2 > MAX_CIP_HOPS) return { ok: false, message: `has ${items.length / 2} hops; at most ${MAX_CIP_HOPS}` }
  const hops: CipHop[] = []
  for (let i = 0; i < items.length; i += 2) {
    const n = i / 2 + 1
    const portText = items[i]!
    const link = items[i + 1]!
    const where = `hop ${n} ("${portText},${link}")`
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return { ok: false, message: `${where}: the port must be a whole number 1 to 65535 (1 = backplane, 2 or 3 = a bridge module's network port)` }
    }
    const port = Number(portText)
    if (port === 1) {
      if (!/^[0-9]{1,2}$/.test(link) || Number(link) > MAX_BACKPLANE_SLOT) {
        return { ok: false, message: `${where}: port 1 is the backplane, so the link must be a slot number 0 to ${MAX_BACKPLANE_SLOT}` }
      }
      hops.push({ port, link, meaning: `backplane, slot ${Number(link)}` })
      continue
    }
    if (isIP(link) === 4) {
      hops.push({ port, link, meaning: `out port ${port} (Ethernet) to ${link}` })
      continue
    }
    if (/^[0-9]{1,3}$/.test(link) && Number(link) <= 255) {
      hops.push({ port, link, meaning: `out port ${port} to network node ${Number(link)} (ControlNet, DH+ or DeviceNet)` })
      continue
    }
    return { ok: false, message: `${where}: on port ${port} the link must be an IPv4 address (Ethernet) or a node number 0 to 255` }
  }
  const explanation = `From the module at ipAddress: ${hops.map((h) => h.meaning).join(', then ')}.`
  return { ok: true, hops, explanation }
}
