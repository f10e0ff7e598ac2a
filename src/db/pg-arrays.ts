/**
 * One-dimensional PostgreSQL arrays in the binary wire format (`array_recv`), handed to pg as Buffers: pg sends a
 * Buffer parameter as binary, so the server parses no text and we build none. pg's own text form of a JS array
 * (`arrayString`) escapes and concatenates element after element: for an alarm batch of a thousand events that was
 * ~9 MB of garbage, two thirds of what the batch allocated, which kept its rows alive across young-generation
 * collections and piled them up in the old one (issue 29, session 19: docs/benchmarks.md); for a live push it was
 * ~1 ms of our CPU and the server's float8 parsing (issue 30). The statement casts each parameter to its array type
 * (`$3::integer[]`), whose element type must be the one written here. The alarm and historian stores use it.
 */
const ELEMENT = { int2: { oid: 21, size: 2 }, int4: { oid: 23, size: 4 }, int8: { oid: 20, size: 8 }, float8: { oid: 701, size: 8 } } as const
type NumberType = keyof typeof ELEMENT
/** The values an integer element holds (int8: what a JS number holds exactly). */
const INTEGER_RANGE: Partial<Record<NumberType, readonly [number, number]>> = {
  int2: [-32_768, 32_767],
  int4: [-2_147_483_648, 2_147_483_647],
  int8: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
}
const TEXT_OID = 25
const HEADER = 20

/** The bytes of a number array of `length` elements (at most: a null takes less). */
export const numberArrayBytes = (type: NumberType, length: number) => HEADER + length * (4 + ELEMENT[type].size)

/** The bytes of a text array (`at` answers each element). */
export function textArrayBytes(length: number, at: (k: number) => string | null): number {
  let bytes = HEADER
  for (let k = 0; k < length; k++) bytes += 4 + Buffer.byteLength(at(k) ?? '')
  return bytes
}

/**
 * The arrays of one statement, written one after another into bytes that are reused from statement to statement
 * (`start` empties them): a push's arrays are ~40 kB, which as new Buffers at every push piled up outside V8's heap
 * until a collection freed them. An array returned is valid until the next `start`; pg copies a parameter's bytes into
 * its message when it sends the statement, so they may be reused once the statement answered.
 */
export class BinaryArrays {
  #bytes = Buffer.allocUnsafe(0)
  #view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, 0)
  #at = 0

  /** Empties the bytes, with room for `bytes` (numberArrayBytes, textArrayBytes) of arrays. */
  start(bytes: number): void {
    if (bytes > this.#bytes.length) {
      this.#bytes = Buffer.allocUnsafe(bytes)
      this.#view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength)
    }
    this.#at = 0
  }

  /** An array of fixed-width numbers (`null` where `at` answers null); `at` takes the element's position. */
  numbers(type: NumberType, length: number, at: (k: number) => number | null): Buffer {
    const { oid, size } = ELEMENT[type]
    const view = this.#view
    const fits = INTEGER_RANGE[type]
    return this.#elements(oid, length, at, (p, value) => {
      // DataView wraps an integer past its width and drops a fraction without a word; the server would refuse the text
      // form of either (22003, 22P02), so a value the element cannot hold is refused here, never written changed.
      if (fits !== undefined && !(Number.isInteger(value) && value >= fits[0] && value <= fits[1])) {
        throw new RangeError(`BinaryArrays: ${value} is not an ${type} value`)
      }
      if (type === 'int2') view.setInt16(p, value)
      else if (type === 'int4') view.setInt32(p, value)
      else if (type === 'float8') view.setFloat64(p, value)
      else {
        // An integer of up to 53 bits as int8, without a BigInt.
        const high = Math.floor(value / 0x1_0000_0000)
        view.setInt32(p, high)
        view.setUint32(p + 4, value - high * 0x1_0000_0000)
      }
      return size
    })
  }

  /** A text array (UTF-8). */
  texts(length: number, at: (k: number) => string | null): Buffer {
    return this.#elements(TEXT_OID, length, at, (p, value) => this.#bytes.write(value, p, 'utf8'))
  }

  /** The elements after the header: a null as the length −1, a value as its length and the bytes `put` writes at `p` (it answers their count). */
  #elements<T>(oid: number, length: number, at: (k: number) => T | null, put: (p: number, value: T) => number): Buffer {
    const start = this.#at
    let hasNull = false
    let p = start + HEADER
    for (let k = 0; k < length; k++) {
      const value = at(k)
      if (value === null) {
        hasNull = true
        this.#view.setInt32(p, -1)
        p += 4
        continue
      }
      const size = put(p + 4, value)
      this.#view.setInt32(p, size)
      p += 4 + size
    }
    return this.#end(start, p, oid, length, hasNull)
  }

  #end(start: number, end: number, oid: number, length: number, hasNull: boolean): Buffer {
    if (end > this.#bytes.length) throw new RangeError('BinaryArrays: more bytes written than start() made room for')
    const view = this.#view
    view.setInt32(start, 1) // dimensions
    view.setInt32(start + 4, hasNull ? 1 : 0)
    view.setInt32(start + 8, oid)
    view.setInt32(start + 12, length)
    view.setInt32(start + 16, 1) // lower bound
    this.#at = end
    return this.#bytes.subarray(start, end)
  }
}

/** Bytes of finished statements, shared by the process's writers (each takes its own while its statement runs). */
const spares: BinaryArrays[] = []
/** Statements at once that keep their bytes for the next (more allocate theirs and drop them). */
const SPARES = 8

/** Runs `use` with bytes no other statement is using; they go back to the spares once it has answered (pg has sent them). */
export async function withBinaryArrays<R>(use: (arrays: BinaryArrays) => Promise<R>): Promise<R> {
  const arrays = spares.pop() ?? new BinaryArrays()
  try {
    return await use(arrays)
  } finally {
    if (spares.length < SPARES) spares.push(arrays)
  }
}
