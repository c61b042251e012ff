package wire

import (
	"encoding/json"
	"net/http"
)

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
	body, _ := json.Marshal(ErrorEnvelope{Value: ErrorValue{
		Error: string(we.Code), Message: we.Message, Stacktrace: "",
	}})
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(we.Code.Status())
	w.Write(body)
}
