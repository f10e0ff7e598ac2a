/**
 * One-dimensional PostgreSQL arrays in the binary wire format (`array_recv`), handed to pg as Buffers: pg sends a
 * Buffer parameter as binary, so the server parses no text and we build none (pg's text form of a 1 000-element
 * array cost a push ~1 ms of our CPU, and the server's float8 parsing its share). The statement casts each parameter
 * to its array type (`$3::integer[]`), whose element type must be the one written here.
 */
const ELEMENT = { int2: { oid: 21, size: 2 }, int4: { oid: 23, size: 4 }, int8: { oid: 20, size: 8 }, float8: { oid: 701, size: 8 } } as const
const TEXT_OID = 25
const HEADER = 20

function header(view: DataView, oid: number, length: number, hasNull: boolean): void {
  view.setInt32(0, 1) // dimensions
  view.setInt32(4, hasNull ? 1 : 0)
  view.setInt32(8, oid)
  view.setInt32(12, length)
  view.setInt32(16, 1) // lower bound
}

/** An array of fixed-width numbers (`null` where `at` answers null); `at` takes the element's position. */
export function numberArray(type: keyof typeof ELEMENT, length: number, at: (k: number) => number | null): Buffer {
  const { oid, size } = ELEMENT[type]
  const bytes = Buffer.allocUnsafe(HEADER + length * (4 + size))
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let hasNull = false
  let p = HEADER
  for (let k = 0; k < length; k++) {
    const value = at(k)
    if (value === null) {
      hasNull = true
      view.setInt32(p, -1)
      p += 4
      continue
    }
    view.setInt32(p, size)
    if (type === 'int2') view.setInt16(p + 4, value)
    else if (type === 'int4') view.setInt32(p + 4, value)
    else if (type === 'float8') view.setFloat64(p + 4, value)
    else {
      // An integer of up to 53 bits as int8, without a BigInt.
      const high = Math.floor(value / 0x1_0000_0000)
      view.setInt32(p + 4, high)
      view.setUint32(p + 8, value - high * 0x1_0000_0000)
    }
    p += 4 + size
  }
  header(view, oid, length, hasNull)
  return bytes.subarray(0, p)
}

/** A text array (UTF-8). */
export function textArray(length: number, at: (k: number) => string | null): Buffer {
  let size = HEADER
  for (let k = 0; k < length; k++) size += 4 + Buffer.byteLength(at(k) ?? '')
  const bytes = Buffer.allocUnsafe(size)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let hasNull = false
  let p = HEADER
  for (let k = 0; k < length; k++) {
    const value = at(k)
    if (value === null) {
      hasNull = true
      view.setInt32(p, -1)
      p += 4
      continue
    }
    const written = bytes.write(value, p + 4, 'utf8')
    view.setInt32(p, written)
    p += 4 + written
  }
  header(view, TEXT_OID, length, hasNull)
  return bytes.subarray(0, p)
}
