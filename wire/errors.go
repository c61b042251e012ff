package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// ErrorCode is a W3C WebDriver error code, the "error" field of an error
// reply (WebDriver §6.6).
type ErrorCode string

// The W3C error codes, with the HTTP status each one travels with.
const (
	ElementClickIntercepted ErrorCode = "element click intercepted"
	ElementNotInteractable  ErrorCode = "element not interactable"
	InsecureCertificate     ErrorCode = "insecure certificate"
	InvalidArgument         ErrorCode = "invalid argument"
	InvalidCookieDomain     ErrorCode = "invalid cookie domain"
	InvalidElementState     ErrorCode = "invalid element state"
	InvalidSelector         ErrorCode = "invalid selector"
	InvalidSessionID        ErrorCode = "invalid session id"
	JavascriptError         ErrorCode = "javascript error"
	MoveTargetOutOfBounds   ErrorCode = "move target out of bounds"
	NoSuchAlert             ErrorCode = "no such alert"
	NoSuchCookie            ErrorCode = "no such cookie"
	NoSuchElement           ErrorCode = "no such element"
	NoSuchFrame             ErrorCode = "no such frame"
	NoSuchWindow            ErrorCode = "no such window"
	NoSuchShadowRoot        ErrorCode = "no such shadow root"
	ScriptTimeout           ErrorCode = "script timeout"
	SessionNotCreated       ErrorCode = "session not created"
	StaleElementReference   ErrorCode = "stale element reference"
	DetachedShadowRoot      ErrorCode = "detached shadow root"
	Timeout                 ErrorCode = "timeout"
	UnableToSetCookie       ErrorCode = "unable to set cookie"
	UnableToCaptureScreen   ErrorCode = "unable to capture screen"
	UnexpectedAlertOpen     ErrorCode = "unexpected alert open"
	UnknownCommand          ErrorCode = "unknown command"
	UnknownError            ErrorCode = "unknown error"
	UnknownMethod           ErrorCode = "unknown method"
	UnsupportedOperation    ErrorCode = "unsupported operation"
)

var statusByCode = map[ErrorCode]int{
	ElementClickIntercepted: http.StatusBadRequest,
	ElementNotInteractable:  http.StatusBadRequest,
	InsecureCertificate:     http.StatusBadRequest,
	InvalidArgument:         http.StatusBadRequest,
	InvalidCookieDomain:     http.StatusBadRequest,
	InvalidElementState:     http.StatusBadRequest,
	InvalidSelector:         http.StatusBadRequest,
	InvalidSessionID:        http.StatusNotFound,
	JavascriptError:         http.StatusInternalServerError,
	MoveTargetOutOfBounds:   http.StatusInternalServerError,
	NoSuchAlert:             http.StatusNotFound,
	NoSuchCookie:            http.StatusNotFound,
	NoSuchElement:           http.StatusNotFound,
	NoSuchFrame:             http.StatusNotFound,
	NoSuchWindow:            http.StatusNotFound,
	NoSuchShadowRoot:        http.StatusNotFound,
	ScriptTimeout:           http.StatusInternalServerError,
	SessionNotCreated:       http.StatusInternalServerError,
	StaleElementReference:   http.StatusNotFound,
	DetachedShadowRoot:      http.StatusNotFound,
	Timeout:                 http.StatusInternalServerError,
	UnableToSetCookie:       http.StatusInternalServerError,
	UnableToCaptureScreen:   http.StatusInternalServerError,
	UnexpectedAlertOpen:     http.StatusInternalServerError,
	UnknownCommand:          http.StatusNotFound,
	UnknownError:            http.StatusInternalServerError,
	UnknownMethod:           http.StatusMethodNotAllowed,
	UnsupportedOperation:    http.StatusInternalServerError,
}

// Status is the HTTP status the spec pairs with the code; unknown codes
// are treated as "unknown error" (500).
func (c ErrorCode) Status() int {
	if s, ok := statusByCode[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a WebDriver error: a code and a human-readable message. Handlers
// return it and the server writes it as the W3C error envelope.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError turns any error into a WebDriver error: an *Error (anywhere in the
// chain) keeps its code, anything else becomes "unknown error".
func AsError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return &Error{Code: UnknownError, Message: err.Error()}
}

// ContentType is the media type of every reply, errors included; some
// clients (tebeka/selenium) reject anything else.
const ContentType = "application/json; charset=utf-8"

// ErrorEnvelope is the W3C error reply body: {"value": ErrorValue}.
type ErrorEnvelope struct {
	Value ErrorValue `json:"value"`
}

// ErrorValue is the value of an error reply.
type ErrorValue struct {
	Error      string `json:"error"`
	Message    string `json:"message"`
	Stacktrace string `json:"stacktrace"`
	Data       any    `json:"data,omitempty"`
}

// ParseError reads a W3C error reply body; ok is false when body is not one.
func ParseError(body []byte) (e *Error, ok bool) {
	var env ErrorEnvelope
	if json.Unmarshal(body, &env) != nil || env.Value.Error == "" {
		return nil, false
	}
	return &Error{Code: ErrorCode(env.Value.Error), Message: env.Value.Message}, true
}
