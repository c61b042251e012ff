package webdriver

import (
	"encoding/json"
	"net/http"

	"github.com/wdext/wdext/wire"
)

// The W3C error model lives in package wire, where clients import it
// without the server; these names keep the server's code short.
type (
	ErrorCode = wire.ErrorCode
	Error     = wire.Error
)

// The W3C error codes (see package wire).
const (
	ElementClickIntercepted = wire.ElementClickIntercepted
	ElementNotInteractable  = wire.ElementNotInteractable
	InsecureCertificate     = wire.InsecureCertificate
	InvalidArgument         = wire.InvalidArgument
	InvalidCookieDomain     = wire.InvalidCookieDomain
	InvalidElementState     = wire.InvalidElementState
	InvalidSelector         = wire.InvalidSelector
	InvalidSessionID        = wire.InvalidSessionID
	JavascriptError         = wire.JavascriptError
	MoveTargetOutOfBounds   = wire.MoveTargetOutOfBounds
	NoSuchAlert             = wire.NoSuchAlert
	NoSuchCookie            = wire.NoSuchCookie
	NoSuchElement           = wire.NoSuchElement
	NoSuchFrame             = wire.NoSuchFrame
	NoSuchWindow            = wire.NoSuchWindow
	NoSuchShadowRoot        = wire.NoSuchShadowRoot
	ScriptTimeout           = wire.ScriptTimeout
	SessionNotCreated       = wire.SessionNotCreated
	StaleElementReference   = wire.StaleElementReference
	DetachedShadowRoot      = wire.DetachedShadowRoot
	Timeout                 = wire.Timeout
	UnableToSetCookie       = wire.UnableToSetCookie
	UnableToCaptureScreen   = wire.UnableToCaptureScreen
	UnexpectedAlertOpen     = wire.UnexpectedAlertOpen
	UnknownCommand          = wire.UnknownCommand
	UnknownError            = wire.UnknownError
	UnknownMethod           = wire.UnknownMethod
	UnsupportedOperation    = wire.UnsupportedOperation
)

// ContentType is the media type of every reply (wire.ContentType).
const ContentType = wire.ContentType

// Errorf builds an *Error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return wire.Errorf(code, format, args...)
}

// AsError turns any error into a WebDriver error (wire.AsError).
func AsError(err error) *Error { return wire.AsError(err) }

// ParseError reads a W3C error reply body (wire.ParseError).
func ParseError(body []byte) (*Error, bool) { return wire.ParseError(body) }

// WriteValue writes a success reply: {"value": v}.
func WriteValue(w http.ResponseWriter, v any) {
	body, err := json.Marshal(struct {
		Value any `json:"value"`
	}{v})
	if err != nil {
		WriteError(w, Errorf(UnknownError, "encoding reply: %v", err))
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// WriteError writes err as the W3C error envelope with its HTTP status.
func WriteError(w http.ResponseWriter, err error) {
	we := AsError(err)
	body, _ := json.Marshal(wire.ErrorEnvelope{Value: wire.ErrorValue{
		Error: string(we.Code), Message: we.Message, Stacktrace: "",
	}})
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(we.Code.Status())
	w.Write(body)
}
