// wdext's extension commands for Node.js WebDriver clients: one call each,
// on a session of a wdext server (or of a Selenium Grid whose nodes relay
// to wdext). No dependencies: it uses the client you already have.
//
// selenium-webdriver:
//
//   import { forSelenium } from 'wdext'
//   const wdext = forSelenium(driver)
//   await wdext.forceSample()
//   const m = await wdext.measureMemory({ source: 'engine' })
//   await wdext.checkLeaks(() => driver.findElement(By.css('#open')).click(), { iterations: 5 })
//
// The commands are defined on the driver's executor (executor.defineCommand,
// as selenium-webdriver's own chromium module adds its vendor commands) and
// run with driver.execute: a W3C error rejects with selenium-webdriver's
// own error class for its code (error.InvalidArgumentError, ...).
//
// WebdriverIO:
//
//   import { addWdioCommands } from 'wdext'
//   addWdioCommands(browser)            // in wdio.conf's before hook, or after remote()
//   await browser.forceSample()
//   const census = await browser.takeCensus({ by: 'objectClass' })
//   await browser.checkLeaks(() => $('#open').click(), { iterations: 5 })
//
// Each is a custom command (browser.addCommand) that sends its request to
// the endpoint in browser.options; a W3C error rejects with a WdextError
// whose .error is the code.
//
// Timeouts are in milliseconds. The commands and their results are in
// wdext's docs/memory.md and docs/forcesample.md.

/**
 * The extension commands: name → HTTP method, path under the session, and
 * how the helper's arguments become the command's parameters.
 */
export const commands = {
  forceSample: { method: 'POST', path: 'forcesample', params: () => ({}) },
  measureMemory: {
    method: 'POST',
    path: 'wdext/memory/measure',
    params: ({ source, timeout } = {}) => some({ source, timeout }),
  },
  collectGarbage: { method: 'POST', path: 'wdext/memory/gc', params: ({ timeout } = {}) => some({ timeout }) },
  takeCensus: {
    method: 'POST',
    path: 'wdext/memory/census',
    params: (breakdown, { targets } = {}) => some({ breakdown, targets }),
  },
  setAllocations: {
    method: 'POST',
    path: 'wdext/memory/allocations',
    params: ({ trackingAllocationSites, allocationSamplingProbability, maxAllocationsLogLength } = {}) =>
      some({ trackingAllocationSites, allocationSamplingProbability, maxAllocationsLogLength }),
  },
  drainAllocations: { method: 'POST', path: 'wdext/memory/allocations/drain', params: () => ({}) },
  startGCLog: { method: 'POST', path: 'wdext/memory/gc-log', params: () => ({ collect: true }) },
  stopGCLog: { method: 'POST', path: 'wdext/memory/gc-log', params: () => ({ collect: false }) },
  gcLog: { method: 'GET', path: 'wdext/memory/gc-log', params: () => undefined },
  startLiveObjects: { method: 'POST', path: 'wdext/memory/live-objects/start', params: () => ({}) },
  stopLiveObjects: { method: 'POST', path: 'wdext/memory/live-objects/stop', params: () => ({}) },
  leakStart: { method: 'POST', path: 'wdext/memory/leaks/start', params: ({ targets } = {}) => some({ targets }) },
  leakStop: { method: 'POST', path: 'wdext/memory/leaks/stop', params: (iterations) => ({ iterations }) },
  leakIteration: { method: 'POST', path: 'wdext/memory/leaks/iteration', params: () => ({}) },
}

function some(o) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null))
}

/**
 * A selenium-webdriver Command (lib/command.js's interface, which
 * WebDriver.execute takes), built here so that this module needs no
 * import of its own: it works with the selenium-webdriver of the project
 * that uses it, wherever this file lives.
 */
class Command {
  constructor(name) {
    this.name_ = name
    this.parameters_ = {}
  }
  getName() {
    return this.name_
  }
  setParameter(name, value) {
    this.parameters_[name] = value
    return this
  }
  setParameters(parameters) {
    this.parameters_ = parameters
    return this
  }
  getParameter(key) {
    return this.parameters_[key]
  }
  getParameters() {
    return this.parameters_
  }
}

/**
 * The extension commands of a selenium-webdriver WebDriver: an object with
 * one async method per entry of commands.
 */
export function forSelenium(driver) {
  const executor = driver.getExecutor()
  const out = {}
  for (const [name, c] of Object.entries(commands)) {
    const id = 'wdext:' + name
    executor.defineCommand(id, c.method, '/session/:sessionId/' + c.path)
    out[name] = (...args) => {
      const cmd = new Command(id)
      const params = c.params(...args)
      if (params) cmd.setParameters({ ...params })
      return driver.execute(cmd)
    }
  }
  out.checkLeaks = (action, opts) => checkLeaks(out, action, opts)
  return out
}

/** A leak check whose verdict names groups that grew: .report is the verdict. */
export class LeakError extends Error {
  constructor(report) {
    const lines = [`wdext: ${report.leaks.length} leak group(s) over ${report.iterations} iterations:`]
    for (const l of report.leaks) lines.push('  ' + describeLeak(l))
    super(lines.join('\n'))
    this.name = 'LeakError'
    this.report = report
  }
}

/** One group of a verdict on one line: growth, retained size, path, creation site. */
export function describeLeak(l) {
  let s = `${l.kind} ${l.name}: +${l.perIteration} per iteration (${l.countDelta} in all), retains ${l.retainedPerIteration ?? 0} B per iteration`
  if (l.retainerPath?.length) s += '; via ' + l.retainerPath.join(' → ')
  const f = l.createdFrom
  if (f) s += `; created in ${f.functionName || '(anonymous)'} ${f.url}:${f.line}:${f.column}`
  return s
}

/**
 * The leak check in one call, on cmds (forSelenium's object, or a browser
 * given addWdioCommands): runs action warmup times (a first run loads code
 * and fills caches, which is no leak), starts a leak check of the current
 * page, runs action iterations times, marking where each ended
 * (leakIteration), and stops. Resolves to the verdict;
 * rejects with a LeakError when it names any group. When action rejects,
 * the check is stopped and its error goes on.
 */
export async function checkLeaks(cmds, action, { iterations = 5, warmup = 1 } = {}) {
  if (!(iterations >= 1) || !(warmup >= 0)) {
    throw new RangeError(`checkLeaks needs iterations >= 1 and warmup >= 0, not ${iterations} and ${warmup}`)
  }
  for (let i = 0; i < warmup; i++) await action()
  await cmds.leakStart()
  for (let i = 0; i < iterations; i++) {
    try {
      if (i > 0) await cmds.leakIteration()
      await action()
    } catch (e) {
      // End the check: its verdict, of a scenario cut short, means nothing.
      await cmds.leakStop(Math.max(i, 1)).catch(() => {})
      throw e
    }
  }
  const report = await cmds.leakStop(iterations)
  if (report.leaks.length) throw new LeakError(report)
  return report
}

/** A W3C error answered to an extension command (WebdriverIO helpers). */
export class WdextError extends Error {
  constructor(status, error, message, command) {
    super(`${command}: ${error}: ${message}`)
    this.name = 'WdextError'
    this.status = status
    this.error = error
  }
}

/**
 * Adds the extension commands to a WebdriverIO browser as custom commands:
 * browser.forceSample(), browser.measureMemory({source}),
 * browser.takeCensus(breakdown), ... It returns the browser.
 */
export function addWdioCommands(browser) {
  for (const [name, c] of Object.entries(commands)) {
    browser.addCommand(name, async function (...args) {
      return call(endpoint(this.options), this.sessionId, c, c.params(...args), this.options.headers, name)
    })
  }
  browser.addCommand('checkLeaks', async function (action, opts) {
    return checkLeaks(this, action, opts)
  })
  return browser
}

function endpoint({ protocol = 'http', hostname = 'localhost', port, path = '/' }) {
  const p = path.endsWith('/') ? path : path + '/'
  return `${protocol}://${hostname}${port ? ':' + port : ''}${p}`
}

/** Sends one extension command to the WebDriver endpoint base (ending in /). */
export async function call(base, sessionId, c, params, headers = {}, what = c.path) {
  const res = await fetch(`${base}session/${encodeURIComponent(sessionId)}/${c.path}`, {
    method: c.method,
    // A Selenium Grid refuses application/json without its charset.
    headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8', Accept: 'application/json' },
    body: params === undefined ? undefined : JSON.stringify(params),
  })
  const text = await res.text()
  let reply
  try {
    reply = JSON.parse(text)
  } catch {
    throw new WdextError(res.status, 'unknown error', `not JSON (HTTP ${res.status}): ${text.slice(0, 200)}`, what)
  }
  const v = reply && reply.value
  if (res.status !== 200 || (v && typeof v === 'object' && typeof v.error === 'string')) {
    throw new WdextError(res.status, v?.error ?? 'unknown error', v?.message ?? text.slice(0, 200), what)
  }
  return v
}
