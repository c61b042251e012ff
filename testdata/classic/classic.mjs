// W3C WebDriver's classic commands, and BiDi, through wdext, as
// selenium-webdriver and WebdriverIO drive them:
// node classic.mjs WDEXT_URL BROWSER PAGE_URL
//
// BROWSER is firefox or chrome; PAGE_URL is testdata/classic/page.html
// served over HTTP. Prints a line per check and "N passed, N failed";
// exits non-zero on a failure. Run by engine/firefox's TestClassicClients.
import assert from 'node:assert/strict'

import { load, checks } from '../../clients/testdata/harness.mjs'

const [server, browserName, page] = process.argv.slice(2)
const { check, finish } = checks()

// selenium-webdriver
{
  const { Builder, By, until } = await load('selenium-webdriver')
  const driver = await new Builder().usingServer(server).forBrowser(browserName).build()
  try {
    await driver.get(page)
    await check('selenium-webdriver: elements, keys, shadow root', async () => {
      const who = await driver.findElement(By.name('who'))
      await who.sendKeys('world')
      await driver.findElement(By.id('go')).click()
      assert.equal(await driver.findElement(By.css('#said')).getText(), 'hello world')
      const root = await driver.findElement(By.id('host')).getShadowRoot()
      assert.equal(await (await root.findElement(By.css('.inner'))).getText(), 'in the shadow')
      await assert.rejects(driver.findElement(By.id('nope')), (e) => e.name === 'NoSuchElementError')
    })
    await check('selenium-webdriver: frames, windows, navigation', async () => {
      await driver.switchTo().frame(await driver.findElement(By.id('frame')))
      assert.equal(await driver.findElement(By.id('inframe')).getText(), 'in the frame')
      await driver.switchTo().defaultContent()
      await driver.findElement(By.id('next')).click()
      await driver.wait(until.titleIs('next'), 10000)
      await driver.navigate().back()
      await driver.wait(until.titleIs('classic'), 10000)
      const first = await driver.getWindowHandle()
      await driver.switchTo().newWindow('window')
      assert.equal((await driver.getAllWindowHandles()).length, 2)
      await driver.close()
      await driver.switchTo().window(first)
    })
    await check('selenium-webdriver: scripts, cookies, actions, screenshot', async () => {
      assert.equal(await driver.executeScript('return arguments[0] * 2', 21), 42)
      await driver.manage().addCookie({ name: 'flavour', value: 'oat' })
      assert.equal((await driver.manage().getCookie('flavour')).value, 'oat')
      await driver.actions().click(await driver.findElement(By.id('who'))).sendKeys('z').perform()
      assert.equal(await driver.findElement(By.id('key')).getText(), 'z')
      assert.ok((await driver.takeScreenshot()).startsWith('iVBOR'))
    })
  } finally {
    await driver.quit()
  }
}

// WebdriverIO, classic (WebDriver over HTTP) and BiDi (its default when
// the browser offers it).
const { remote } = await load('webdriverio')
const u = new URL(server)
for (const bidi of [false, true]) {
  const name = `WebdriverIO ${bidi ? 'BiDi' : 'classic'}`
  const browser = await remote({
    protocol: u.protocol.slice(0, -1),
    hostname: u.hostname,
    port: Number(u.port),
    path: u.pathname,
    logLevel: 'error',
    capabilities: { browserName, 'wdio:enforceWebDriverClassic': !bidi },
  })
  try {
    await check(`${name}: session`, async () => {
      assert.equal(browser.isBidi, bidi)
    })
    await browser.url(page)
    await check(`${name}: elements`, async () => {
      await browser.$('#who').setValue('wdio')
      await browser.$('#go').click()
      assert.equal(await browser.$('#said').getText(), 'hello wdio')
      assert.equal((await browser.$$('option')).length, 2)
      assert.equal(await browser.$('#host').shadow$('.inner').getText(), 'in the shadow')
      assert.equal(await browser.getTitle(), 'classic')
      assert.equal(await browser.execute(() => 1 + 1), 2)
    })
    if (bidi) {
      await check(`${name}: a BiDi command and a console event`, async () => {
        const tree = await browser.browsingContextGetTree({})
        assert.equal(tree.contexts.length, 1)
        const logged = new Promise((resolve) => browser.on('log.entryAdded', (e) => resolve(e.text)))
        await browser.sessionSubscribe({ events: ['log.entryAdded'] })
        await browser.execute(() => console.log('through wdext'))
        assert.equal(await logged, 'through wdext')
      })
    }
  } finally {
    await browser.deleteSession()
  }
}

finish()
