// Builds the JavaScript that `bin/sitegrid` and `npm start` run: esbuild bundles src/cli/main.ts into dist/ as ES
// modules with source maps (bin/sitegrid runs node with --enable-source-maps, so stack traces name the TypeScript).
// Dependencies stay external (loaded from node_modules). Code splitting: each command loads the code it needs on
// first use (`await import(...)`), so `sitegrid --help` loads no database driver, no fastify and no console.
// Runs on `npm ci` (prepare), `npm run build`, before `npm test`, and from test/cli/process.ts when dist is stale.
//
// Writing is safe while servers run from dist: chunks carry a content hash (a name always holds the same content),
// the entry is written last and renamed into place, and chunks no build references are removed only after a day.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { build, type Plugin } from 'esbuild'

const ROOT = join(import.meta.dirname, '..', '..')
export const DIST = join(ROOT, 'dist')
/** The file bin/sitegrid runs; its modification time is the build's time (bin/sitegrid compares sources to it). */
export const ENTRY = join(DIST, 'sitegrid.mjs')
const UNREFERENCED_TTL_MS = 24 * 3_600_000
const { dependencies, devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>
const BUNDLED = ['typebox', 'kysely']

// Sources find files next to themselves (`import.meta.dirname`, e.g. the console's web/dist/console from
// src/modules/console/): in the bundle that would be dist/, so each use is rewritten to the source's own folder,
// computed at run time from the bundle's place (dist/ is one level under the root), which keeps the tree relocatable.
const sourceDirname: Plugin = {
  name: 'source-dirname',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises')
      const text = await readFile(args.path, 'utf8')
      if (!text.includes('import.meta.dirname')) return undefined
      const rel = relative(ROOT, dirname(args.path)).split('\\').join('/')
      return { contents: text.replaceAll('import.meta.dirname', `__sitegridSource(${JSON.stringify(rel)})`), loader: 'ts' }
    })
  },
}

const BANNER = [
  "import { createRequire as __sitegridRequire } from 'node:module';",
  "import { fileURLToPath as __sitegridPath } from 'node:url';",
  // CommonJS dependencies that call require() from bundled code.
  'const require = __sitegridRequire(import.meta.url);',
  "const __sitegridSource = (rel) => __sitegridPath(new URL(`../${rel}`, import.meta.url)).replace(/[\\\\/]$/, '');",
].join(' ')

/**
 * Bundles the CLI into `outDir` (dist/ by default; see the file's head). Returns the files written, the entry last,
 * and the packages each output loads when it loads (static imports, followed through the chunks it imports).
 */
export async function buildCli(outDir: string = DIST): Promise<{ files: string[]; loadsAtStart: (output: string) => Set<string> }> {
  const result = await build({
    entryPoints: { sitegrid: join(ROOT, 'src', 'cli', 'main.ts') },
    outdir: outDir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Packages load from node_modules, except the two pure-JS ES-module packages made of hundreds of small files
    // (TypeBox about 700, Kysely about 300): opening each is most of a command's start, so they are bundled in.
    external: [...Object.keys(dependencies ?? {}), ...Object.keys(devDependencies ?? {})].filter((name) => !BUNDLED.includes(name)),
    sourcemap: 'linked',
    sourcesContent: false,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    write: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [sourceDirname],
    banner: { js: BANNER },
  })
  mkdirSync(outDir, { recursive: true })
  const written: string[] = []
  const entryPath = join(outDir, 'sitegrid.mjs')
  const entry = result.outputFiles.filter((f) => f.path === entryPath || f.path === `${entryPath}.map`)
  for (const file of [...result.outputFiles.filter((f) => !entry.includes(f)), ...entry.sort((a) => (a.path === entryPath ? 1 : -1))]) {
    const staging = `${file.path}.tmp-${process.pid}`
    writeFileSync(staging, file.contents)
    renameSync(staging, file.path)
    written.push(file.path)
  }
  const keep = new Set(written.map((p) => relative(outDir, p)))
  for (const name of readdirSync(outDir)) {
    const path = join(outDir, name)
    if (!keep.has(name) && Date.now() - statSync(path).mtimeMs > UNREFERENCED_TTL_MS) rmSync(path, { force: true, recursive: true })
  }
  const outputs = result.metafile.outputs
  const loadsAtStart = (output: string) => {
    const seen = new Set<string>()
    const packages = new Set<string>()
    const visit = (path: string) => {
      if (seen.has(path)) return
      seen.add(path)
      for (const i of outputs[path]?.imports ?? []) {
        if (i.kind !== 'import-statement') continue
        if (i.external) packages.add(i.path)
        else visit(i.path)
      }
    }
    visit(relative(process.cwd(), join(outDir, output)).split('\\').join('/'))
    return packages
  }
  return { files: written, loadsAtStart }
}

if (process.argv[1] === import.meta.filename) {
  const started = Date.now()
  const { files } = await buildCli()
  console.error(`build: ${files.length} files in ${relative(process.cwd(), DIST) || '.'} in ${Date.now() - started} ms`)
}
