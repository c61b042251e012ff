// What the Node.js test scripts share: load, to import the clients, and
// checks, to count and print their checks.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const modules = process.env.WDEXT_NODE_MODULES || path.join(here, '../../.cache/node/node_modules')

// load imports a Node.js package installed under WDEXT_NODE_MODULES
// (default: the repository's .cache/node/node_modules, where
// scripts/deps.sh installs them): the test scripts are not in that tree,
// so a bare import would not find them.
export async function load(name) {
  const dir = path.join(modules, name)
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const dot = pkg.exports?.['.']
  const entry = (typeof dot === 'string' ? dot : dot?.import ?? dot?.default) ?? pkg.main ?? 'index.js'
  let file = path.join(dir, entry)
  if (!path.extname(file)) file += '.js'
  return import(pathToFileURL(file).href)
}

// checks counts checks: check(name, f) runs f and prints "ok name" or
// "FAIL name" with the error; finish prints "N passed, N failed" and
// exits non-zero on a failure.
export function checks() {
  let passed = 0
  let failed = 0
  return {
    async check(name, f) {
      try {
        await f()
        console.log('ok', name)
        passed++
      } catch (e) {
        console.log('FAIL', name)
        console.log(e)
        failed++
      }
    },
    finish() {
      console.log(`${passed} passed, ${failed} failed`)
      process.exit(failed ? 1 : 0)
    },
  }
}
