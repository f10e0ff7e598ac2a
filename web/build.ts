// Builds the web console: one minified ES module bundle and one stylesheet with content-hashed names, and an
// index.html naming them, into web/dist/console (or `outDir`). esbuild does it in well under a second, so it runs
// on `npm ci` (prepare), before `npm test` and before `npm start`. Nothing is fetched at run time (no CDN).
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'

const WEB = import.meta.dirname
export const DEFAULT_OUT_DIR = join(WEB, 'dist', 'console')

const hashOf = (data: Uint8Array | string) => createHash('sha256').update(data).digest('base64url').slice(0, 12)

/** Bundles the console into `outDir` (replaced whole, atomically enough for a running server: new names first). */
export async function buildConsole(outDir: string = DEFAULT_OUT_DIR): Promise<{ outDir: string; files: string[] }> {
  const result = await build({
    entryPoints: { main: join(WEB, 'src', 'main.ts'), styles: join(WEB, 'src', 'styles.css') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    platform: 'browser',
    sourcemap: false,
    legalComments: 'none',
    write: false,
    outdir: 'out',
    logLevel: 'silent',
  })
  const staging = `${resolve(outDir)}.tmp-${process.pid}-${Date.now()}`
  mkdirSync(join(staging, 'assets'), { recursive: true })
  const names: Record<string, string> = {}
  for (const file of result.outputFiles) {
    const ext = file.path.endsWith('.css') ? 'css' : 'js'
    const base = file.path.endsWith('.css') ? 'styles' : 'main'
    const name = `${base}.${hashOf(file.contents)}.${ext}`
    writeFileSync(join(staging, 'assets', name), file.contents)
    names[ext] = name
  }
  if (!names.js || !names.css) throw new Error('the console build produced no script or no stylesheet')
  const html = readFileSync(join(WEB, 'src', 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/assets/${names.js}`)
    .replace('%STYLES%', `/assets/${names.css}`)
  writeFileSync(join(staging, 'index.html'), html)
  mkdirSync(join(outDir, '..'), { recursive: true })
  // Two builds at once (test files starting in parallel) may cross here: the last rename wins, both are whole.
  for (let attempt = 1; ; attempt++) {
    rmSync(outDir, { recursive: true, force: true })
    try {
      renameSync(staging, outDir)
      break
    } catch (error) {
      if (attempt >= 5) throw error
    }
  }
  return { outDir, files: ['index.html', `assets/${names.js}`, `assets/${names.css}`] }
}

/** Builds the console unless a build is already there (tests; `npm test` builds first anyway). */
export async function ensureConsoleBuilt(outDir: string = DEFAULT_OUT_DIR): Promise<string> {
  if (!existsSync(join(outDir, 'index.html'))) await buildConsole(outDir)
  return outDir
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const started = performance.now()
  const { outDir, files } = await buildConsole(process.argv[2] ?? DEFAULT_OUT_DIR)
  process.stdout.write(`console built in ${Math.round(performance.now() - started)} ms → ${outDir} (${files.join(', ')})\n`)
}
