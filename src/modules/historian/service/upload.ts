import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { invalidField, type DomainError } from '../../../errors/domain-error.ts'
import { UploadFileTooLarge } from '../errors.ts'
import type { UploadPart } from './form.ts'
import type { TrendSource } from './import-run.ts'

type FilePart = Extract<UploadPart, { kind: 'file' }>

const tooLarge = (name: string, limit: number) => new UploadFileTooLarge(name, limit)

/** Reads a small file part (the mapping) whole, with its hash; over `maxBytes` is a 413 naming the part. */
export async function readSmallFile(part: FilePart, maxBytes: number): Promise<{ bytes: Buffer; sha256: string }> {
  const hash = createHash('sha256')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of part.stream) {
    size += chunk.length
    if (size > maxBytes) throw tooLarge(part.name, maxBytes)
    hash.update(chunk)
    chunks.push(Buffer.from(chunk))
  }
  if (part.stream.truncated === true) throw tooLarge(part.name, maxBytes)
  return { bytes: Buffer.concat(chunks), sha256: hash.digest('hex') }
}

/** The trend part read straight from the request, hashed and counted as it passes. */
export function streamingSource(part: FilePart, maxBytes: number): TrendSource {
  const hash = createHash('sha256')
  let bytes = 0
  async function* chunks() {
    for await (const chunk of part.stream) {
      bytes += chunk.length
      hash.update(chunk)
      yield chunk
    }
    if (part.stream.truncated === true) throw tooLarge(part.name, maxBytes)
  }
  let digest: string | undefined
  return { chunks: chunks(), bytesRead: () => bytes, sha256: () => (digest ??= hash.digest('hex')) }
}

/**
 * A trend part that arrived before the site, format or mapping: kept in a temporary file (constant memory) and
 * imported once the form is complete. Send trend_csv last to have it streamed straight into the database.
 */
export async function spoolToDisk(part: FilePart, maxBytes: number): Promise<{ source: () => TrendSource; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'sitegrid-historian-'))
  const path = join(dir, 'trend.csv')
  const hash = createHash('sha256')
  try {
    await pipeline(
      part.stream,
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk)
          done(null, chunk)
        },
      }),
      createWriteStream(path),
    )
    if (part.stream.truncated === true) throw tooLarge(part.name, maxBytes)
  } catch (err) {
    await rm(dir, { recursive: true, force: true })
    throw err
  }
  const digest = hash.digest('hex')
  return {
    source: () => {
      let read = 0
      async function* chunks() {
        for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
          read += chunk.length
          yield chunk
        }
      }
      return { chunks: chunks(), bytesRead: () => read, sha256: () => digest }
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

export function unknownFilePart(name: string): DomainError {
  return invalidField(`/${name}`, 'is not a file part of this upload; send trend_csv and mapping_csv', 'part')
}
