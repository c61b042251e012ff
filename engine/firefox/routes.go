package firefox

import (
	"encoding/json"
	"net/http"
)

// route is a W3C WebDriver command and the Marionette command it is: the
// body's members are the command's parameters, with the path's element,
// shadow root or name added under param's names.
type route struct {
	pattern string // net/http pattern, after /session/{id}
	command string
	// path names the Marionette parameters the path's wildcards give:
	// wildcard → parameter.
	path map[string]string
	// extra are fixed parameters (a screenshot's flags).
	extra map[string]any
	// shape, if set, turns the result into the W3C value.
	shape func(json.RawMessage) (any, error)
}

var (
	elementID = map[string]string{"eid": "id"}
	fromElem  = map[string]string{"eid": "element"}
	fromRoot  = map[string]string{"sid": "shadowRoot"}
)

// routes are the classic W3C commands, each one Marionette command
// (geckodriver's mapping). New Session, Delete Session, Status and Get
// Named Cookie are the translator's own.
var routes = []route{
	{pattern: "GET /timeouts", command: "WebDriver:GetTimeouts"},
	{pattern: "POST /timeouts", command: "WebDriver:SetTimeouts"},
	{pattern: "POST /url", command: "WebDriver:Navigate"},
	{pattern: "GET /url", command: "WebDriver:GetCurrentURL"},
	{pattern: "POST /back", command: "WebDriver:Back"},
	{pattern: "POST /forward", command: "WebDriver:Forward"},
	{pattern: "POST /refresh", command: "WebDriver:Refresh"},
	{pattern: "GET /title", command: "WebDriver:GetTitle"},
	{pattern: "GET /window", command: "WebDriver:GetWindowHandle"},
	{pattern: "DELETE /window", command: "WebDriver:CloseWindow"},
	{pattern: "POST /window", command: "WebDriver:SwitchToWindow"},
	{pattern: "GET /window/handles", command: "WebDriver:GetWindowHandles"},
	{pattern: "POST /window/new", command: "WebDriver:NewWindow"},
	{pattern: "POST /frame", command: "WebDriver:SwitchToFrame"},
	{pattern: "POST /frame/parent", command: "WebDriver:SwitchToParentFrame"},
	{pattern: "GET /window/rect", command: "WebDriver:GetWindowRect"},
	{pattern: "POST /window/rect", command: "WebDriver:SetWindowRect"},
	{pattern: "POST /window/maximize", command: "WebDriver:MaximizeWindow"},
	{pattern: "POST /window/minimize", command: "WebDriver:MinimizeWindow"},
	{pattern: "POST /window/fullscreen", command: "WebDriver:FullscreenWindow"},
	{pattern: "GET /element/active", command: "WebDriver:GetActiveElement"},
	{pattern: "GET /element/{eid}/shadow", command: "WebDriver:GetShadowRoot", path: elementID},
	{pattern: "POST /element", command: "WebDriver:FindElement"},
	{pattern: "POST /elements", command: "WebDriver:FindElements"},
	{pattern: "POST /element/{eid}/element", command: "WebDriver:FindElement", path: fromElem},
	{pattern: "POST /element/{eid}/elements", command: "WebDriver:FindElements", path: fromElem},
	{pattern: "POST /shadow/{sid}/element", command: "WebDriver:FindElementFromShadowRoot", path: fromRoot},
	{pattern: "POST /shadow/{sid}/elements", command: "WebDriver:FindElementsFromShadowRoot", path: fromRoot},
	{pattern: "GET /element/{eid}/selected", command: "WebDriver:IsElementSelected", path: elementID},
	{pattern: "GET /element/{eid}/displayed", command: "WebDriver:IsElementDisplayed", path: elementID},
	{pattern: "GET /element/{eid}/attribute/{name}", command: "WebDriver:GetElementAttribute", path: map[string]string{"eid": "id", "name": "name"}},
	{pattern: "GET /element/{eid}/property/{name}", command: "WebDriver:GetElementProperty", path: map[string]string{"eid": "id", "name": "name"}},
	{pattern: "GET /element/{eid}/css/{name}", command: "WebDriver:GetElementCSSValue", path: map[string]string{"eid": "id", "name": "propertyName"}},
	{pattern: "GET /element/{eid}/text", command: "WebDriver:GetElementText", path: elementID},
	{pattern: "GET /element/{eid}/name", command: "WebDriver:GetElementTagName", path: elementID},
	{pattern: "GET /element/{eid}/rect", command: "WebDriver:GetElementRect", path: elementID, shape: rect},
	{pattern: "GET /element/{eid}/enabled", command: "WebDriver:IsElementEnabled", path: elementID},
	{pattern: "GET /element/{eid}/computedrole", command: "WebDriver:GetComputedRole", path: elementID},
	{pattern: "GET /element/{eid}/computedlabel", command: "WebDriver:GetComputedLabel", path: elementID},
	{pattern: "POST /element/{eid}/click", command: "WebDriver:ElementClick", path: elementID},
	{pattern: "POST /element/{eid}/clear", command: "WebDriver:ElementClear", path: elementID},
	{pattern: "POST /element/{eid}/value", command: "WebDriver:ElementSendKeys", path: elementID},
	{pattern: "GET /source", command: "WebDriver:GetPageSource"},
	{pattern: "POST /execute/sync", command: "WebDriver:ExecuteScript"},
	{pattern: "POST /execute/async", command: "WebDriver:ExecuteAsyncScript"},
	{pattern: "GET /cookie", command: "WebDriver:GetCookies"},
	{pattern: "POST /cookie", command: "WebDriver:AddCookie"},
	{pattern: "DELETE /cookie/{name}", command: "WebDriver:DeleteCookie", path: map[string]string{"name": "name"}},
	{pattern: "DELETE /cookie", command: "WebDriver:DeleteAllCookies"},
	{pattern: "POST /actions", command: "WebDriver:PerformActions"},
	{pattern: "DELETE /actions", command: "WebDriver:ReleaseActions"},
	{pattern: "POST /alert/dismiss", command: "WebDriver:DismissAlert"},
	{pattern: "POST /alert/accept", command: "WebDriver:AcceptAlert"},
	{pattern: "GET /alert/text", command: "WebDriver:GetAlertText"},
	{pattern: "POST /alert/text", command: "WebDriver:SendAlertText"},
	{pattern: "GET /screenshot", command: "WebDriver:TakeScreenshot", extra: map[string]any{"full": false, "hash": false, "scroll": true}},
	{pattern: "GET /element/{eid}/screenshot", command: "WebDriver:TakeScreenshot", path: elementID, extra: map[string]any{"full": false, "hash": false, "scroll": true}},
	{pattern: "POST /print", command: "WebDriver:Print"},
}

// value is a Marionette result as the W3C value: most commands' results
// come as {"value": v}; some (Find Elements, Get Cookies, Get Timeouts,
// the window rects) come bare.
func value(raw json.RawMessage) json.RawMessage {
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped) == 1 {
		if v, ok := wrapped["value"]; ok {
			return v
		}
	}
	return raw
}

// rect keeps an element rect's W3C members (Marionette adds top, left,
// bottom and right).
func rect(raw json.RawMessage) (any, error) {
	var r struct {
		X      float64 `json:"x"`
		Y      float64 `json:"y"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	}
	err := json.Unmarshal(raw, &r)
	return r, err
}

// params are the Marionette parameters of a request to rt: the body's
// members and the path's.
func (rt route) params(r *http.Request, body map[string]any) map[string]any {
	p := body
	if p == nil {
		p = map[string]any{}
	}
	for wildcard, name := range rt.path {
		p[name] = r.PathValue(wildcard)
	}
	for k, v := range rt.extra {
		p[k] = v
	}
	return p
}
