// `sitegrid` pre-bundled for tests that start many server processes (test/hardening/crash.test.ts restarts one per
// round): esbuild bundles src/cli/main.ts into one ES module (dependencies stay external, loaded from node_modules)
// in a fraction of a second, and `node bundle.mjs serve` starts in about a second instead of the several that
// loading every source through tsx takes. The bundle sits three directories under the project root
// (node_modules/.cache/sitegrid-test-serve/), where `import.meta.dirname`-relative paths such as the console's
// `../../../web/dist/console` resolve as they do from src/modules/console/. One file per test process, removed at exit.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

const ROOT = join(import.meta.dirname, '..', '..')
const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'sitegrid-test-serve')

let bundled: Promise<string> | undefined

/** The path of this process's bundle of `sitegrid` (built on first use): run it as `node <path> serve`. */
export function serverBundle(): Promise<string> {
  bundled ??= (async () => {
    mkdirSync(OUT_DIR, { recursive: true })
    const outfile = join(OUT_DIR, `main-${process.pid}-${Math.random().toString(36).slice(2, 8)}.mjs`)
    process.once('exit', () => rmSync(outfile, { force: true }))
    await build({
      entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: false,
      logLevel: 'silent',
      // CommonJS dependencies that call require() from bundled code.
      banner: { js: "import { createRequire as __sitegridRequire } from 'node:module'; const require = __sitegridRequire(import.meta.url);" },
    })
    return outfile
  })()
  return bundled
}
