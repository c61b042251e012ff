package memory_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
)

// pythonClient drives wdext with Selenium's Python client (Debian's
// python3-selenium 4.8): the memory and Debugger.Memory commands as custom
// commands, with their exact parameters, and a misspelt one.
const pythonClient = `
import json, os, sys
from selenium import webdriver
from selenium.common.exceptions import InvalidArgumentException
opts = webdriver.ChromeOptions()
d = webdriver.Remote(command_executor=os.environ["WDEXT_URL"], options=opts)
try:
    ex = d.command_executor._commands
    ex["measure"] = ("POST", "/session/$sessionId/wdext/memory/measure")
    ex["census"] = ("POST", "/session/$sessionId/wdext/memory/census")
    d.get("data:text/html,<script>class Foo {}; window.keep = [new Foo(), new Foo(), new Foo()]</script>")
    m = d.execute("measure", {"source": "engine"})["value"]
    c = d.execute("census", {"breakdown": {"by": "objectClass", "then": {"by": "count", "count": True, "bytes": False}}})["value"]
    try:
        d.execute("census", {"breakdwon": {"by": "count"}})
        misspelt = "accepted"
    except InvalidArgumentException as e:
        misspelt = e.msg
    print(json.dumps({"bytes": m["bytes"], "foo": c["Foo"]["count"], "misspelt": misspelt}))
finally:
    d.quit()
`

// The parameter policy (webdriver.DecodeParams) holds for Selenium's
// Python client: its commands' exact parameters are accepted (it strips
// the "sessionId" it adds), and a misspelt one is "invalid argument".
func TestPythonClientParameters(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import selenium").Run(); err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatalf("python3-selenium required: %v", err)
		}
		t.Skipf("needs Debian's python3-selenium: %v", err)
	}
	env := chromiumtest.Start(t, memory.Register, debuggermemory.Register)
	cmd := exec.Command("/usr/bin/python3", "-c", pythonClient)
	cmd.Env = append(os.Environ(), "WDEXT_URL="+env.URL)
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	got := string(out)
	assert.Assert(t, strings.Contains(got, `"foo": 3`), got)
	assert.Assert(t, strings.Contains(got, `unknown parameter \"breakdwon\"`), got)
	assert.Assert(t, !strings.Contains(got, `"bytes": 0,`), got)
}
