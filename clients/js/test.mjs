// Drives a real browser through wdext.mjs, with selenium-webdriver and
// with WebdriverIO: node test.mjs WDEXT_URL PAGE_URL
//
// WDEXT_URL is a wdext server (or a Grid in front of wdext nodes),
// PAGE_URL testdata/readme/app.html served with Document-Policy:
// js-profiling (wdext's Go test cmd/wdext TestClientJS runs it so). The
// clients come from WDEXT_NODE_MODULES (default: the repository's
// .cache/node/node_modules, where scripts/deps.sh installs them). Prints a
// line per check and "N passed, N failed"; exits non-zero on a failure.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'

import { forSelenium, addWdioCommands, WdextError, LeakError } from './wdext.mjs'
import { load, checks } from '../testdata/harness.mjs'

const [server, page] = process.argv.slice(2)
if (!server || !page) {
  console.error('usage: node test.mjs WDEXT_URL PAGE_URL')
  process.exit(2)
}
const { check, finish } = checks()

// The samples forced between two marks of a page whose profiler samples
// every 10 s: exactly the forced ones.
async function forcedSamples(exec, execAsync, force) {
  await exec('window.profiler = new Profiler({sampleInterval: 600000, maxBufferSize: 100})')
  const t0 = await exec('return performance.now()')
  for (let i = 0; i < 3; i++) assert.equal(await force(), null)
  const t1 = await exec('return performance.now()')
  const samples = await execAsync('profiler.stop().then(trace => arguments[arguments.length - 1](trace.samples))')
  return samples.filter((s) => t0 < s.timestamp && s.timestamp < t1).length
}

// Two buttons: a re-render that leaks nothing, and one that also keeps a
// detached div a click.
const buttons = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../testdata/leak-buttons.js'), 'utf8')

// checkClicks: a flow of clicks that leaks nothing gives [], one that
// keeps a div a click rejects with a LeakError naming that group alone.
async function checkClicks(checkLeaks, click) {
  const r = await checkLeaks(() => click('#render'), { iterations: 3 })
  assert.deepEqual(r.leaks, [])
  await assert.rejects(checkLeaks(() => click('#leak'), { iterations: 3 }), (e) => {
    assert.ok(e instanceof LeakError, String(e))
    assert.deepEqual(e.report.leaks.map((l) => [l.kind, l.name, l.perIteration]), [['detached-dom', 'HTMLDivElement div.kept', 1]])
    assert.ok(e.message.includes('\n  detached-dom HTMLDivElement div.kept: +1 per iteration'), e.message)
    return true
  })
}

// selenium-webdriver
{
  const { Builder, Browser, By, error } = await load('selenium-webdriver')
  const driver = await new Builder().usingServer(server).forBrowser(Browser.CHROME).build()
  try {
    const wdext = forSelenium(driver)
    await driver.get(page)
    assert.equal(await driver.executeAsyncScript('ready.then(arguments[0])'), true)
    await check('selenium-webdriver: forceSample', async () => {
      const n = await forcedSamples((s) => driver.executeScript(s), (s) => driver.executeAsyncScript(s), wdext.forceSample)
      assert.equal(n, 3)
    })
    await check('selenium-webdriver: measureMemory', async () => {
      const m = await wdext.measureMemory({ source: 'engine', timeout: 30000 })
      assert.ok(m.bytes > 0 && Array.isArray(m.breakdown), JSON.stringify(m))
    })
    await check('selenium-webdriver: an invalid argument is its InvalidArgumentError', async () => {
      await assert.rejects(wdext.measureMemory({ source: 'nonsense' }), error.InvalidArgumentError)
    })
    await check('selenium-webdriver: collectGarbage', async () => {
      const r = await wdext.collectGarbage()
      assert.deepEqual(r.targets.map((t) => t.type).sort(), ['iframe', 'page', 'worker'])
    })
    await check('selenium-webdriver: takeCensus', async () => {
      const c = await wdext.takeCensus({ by: 'objectClass' })
      assert.deepEqual(c.Foo, { count: 1000, bytes: 16000 })
    })
    await check('selenium-webdriver: gc log', async () => {
      assert.equal((await wdext.startGCLog()).collecting, true)
      await wdext.collectGarbage()
      assert.ok(Array.isArray((await wdext.gcLog()).entries))
      assert.equal((await wdext.stopGCLog()).collecting, false)
    })
    await check('selenium-webdriver: allocations and live objects', async () => {
      const s = await wdext.setAllocations({ trackingAllocationSites: true, allocationSamplingProbability: 1 })
      assert.equal(s.trackingAllocationSites, true)
      await driver.executeScript('window.big = Array.from({length: 1000}, (_, i) => ({i}))')
      assert.ok((await wdext.drainAllocations()).log.length > 0)
      await wdext.setAllocations({ trackingAllocationSites: false })
      await wdext.startLiveObjects()
      // A large array too: V8's large-object space never moves it, so
      // it keeps its allocation stack (a GC under load can move the small
      // objects after they got their ids, and their stacks go).
      await driver.executeScript('window.more = [Array.from({length: 1000}, (_, i) => ({i})), new Array(100000).fill(1)]')
      const live = await wdext.stopLiveObjects()
      assert.ok(Array.isArray(live.liveObjects) && live.count > 0)
    })
    await check('selenium-webdriver: leak check', async () => {
      await wdext.leakStart()
      for (let i = 0; i < 3; i++) {
        await driver.executeScript('(window.kept = window.kept || []).push({leak: 1}, {leak: 2})')
      }
      const r = await wdext.leakStop(3)
      assert.equal(r.iterations, 3)
      const kept = r.leaks.find((l) => l.kind === 'objects' && l.retainerPath.includes('kept (property)'))
      assert.ok(kept && kept.countDelta === 6 && kept.perIteration === 2, JSON.stringify(r))
    })
    await check('selenium-webdriver: checkLeaks over element clicks', async () => {
      await driver.executeScript(buttons)
      await checkClicks(wdext.checkLeaks, async (button) => {
        await driver.findElement(By.css(button)).click()
        const rows = await driver.findElements(By.css('#rows li'))
        assert.equal(rows.length, 20)
        assert.equal(await rows[0].getText(), 'row 0')
      })
    })
  } finally {
    await driver.quit()
  }
}

// WebdriverIO
{
  const { remote } = await load('webdriverio')
  const u = new URL(server)
  const browser = await remote({
    protocol: u.protocol.slice(0, -1),
    hostname: u.hostname,
    port: Number(u.port),
    path: u.pathname,
    logLevel: 'error',
    capabilities: { browserName: 'chrome' },
  })
  try {
    addWdioCommands(browser)
    await browser.url(page)
    assert.equal(await browser.executeAsync((done) => window.ready.then(done)), true)
    await check('WebdriverIO: browser.forceSample', async () => {
      const n = await forcedSamples(
        (s) => browser.execute(s),
        (s) => browser.executeAsync(s),
        () => browser.forceSample(),
      )
      assert.equal(n, 3)
    })
    await check('WebdriverIO: browser.measureMemory', async () => {
      const m = await browser.measureMemory({ source: 'engine' })
      assert.ok(m.bytes > 0 && Array.isArray(m.breakdown), JSON.stringify(m))
    })
    await check('WebdriverIO: an invalid argument is a WdextError', async () => {
      await assert.rejects(browser.measureMemory({ source: 'nonsense' }), (e) => e instanceof WdextError && e.error === 'invalid argument' && e.status === 400)
    })
    await check('WebdriverIO: browser.collectGarbage', async () => {
      const r = await browser.collectGarbage()
      assert.deepEqual(r.targets.map((t) => t.type).sort(), ['iframe', 'page', 'worker'])
    })
    await check('WebdriverIO: browser.takeCensus', async () => {
      const c = await browser.takeCensus({ by: 'objectClass' })
      assert.deepEqual(c.Foo, { count: 1000, bytes: 16000 })
    })
    await check('WebdriverIO: gc log and live objects', async () => {
      assert.equal((await browser.startGCLog()).collecting, true)
      assert.ok(Array.isArray((await browser.gcLog()).entries))
      assert.equal((await browser.stopGCLog()).collecting, false)
      await browser.startLiveObjects()
      const live = await browser.stopLiveObjects()
      assert.ok(Array.isArray(live.liveObjects))
    })
    await check('WebdriverIO: leak check', async () => {
      await browser.leakStart()
      for (let i = 0; i < 3; i++) {
        await browser.execute('(window.kept2 = window.kept2 || []).push({leak: 1}, {leak: 2})')
      }
      const r = await browser.leakStop(3)
      const kept = r.leaks.find((l) => l.kind === 'objects' && l.retainerPath.includes('kept2 (property)'))
      assert.ok(kept && kept.countDelta === 6 && kept.perIteration === 2, JSON.stringify(r))
    })
    await check('WebdriverIO: browser.checkLeaks over element clicks', async () => {
      await browser.execute(buttons)
      await checkClicks((action, opts) => browser.checkLeaks(action, opts), async (button) => {
        await browser.$(button).click()
        const rows = await browser.$$('#rows li')
        assert.equal(rows.length, 20)
        assert.equal(await rows[0].getText(), 'row 0')
      })
    })
  } finally {
    await browser.deleteSession()
  }
}

finish()
