// argocd-health runs an Argo CD resource health check (Lua) the way Argo CD runs a custom one from
// argocd-cm: in gopher-lua, with only the package, base and table libraries and a restricted os (no
// string, math or io library: resource.customizations.useOpenLibs is off by default), the object
// as the global `obj` (numbers as Lua numbers, JSON null as nil), one second to finish, and a table
// with `status` and `message` as the answer. It reads JSON objects on stdin (one after another, or a
// List) and writes one JSON line per object: {"name","status","message"} or {"name","error"}.
//
//	argocd-health deploy/argocd/health.lua < order.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Argo CD's health codes; anything else reads Unknown "Lua returned an invalid health status".
var codes = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

type answer struct {
	Name    string `json:"name"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-health <health.lua> < objects.json")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = run(string(script), os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-health:", err)
		os.Exit(1)
	}
}

func run(script string, in io.Reader, out io.Writer) error {
	decoder := json.NewDecoder(in)
	encoder := json.NewEncoder(out)
	for {
		var object map[string]interface{}
		if err := decoder.Decode(&object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		items := []interface{}{object}
		if list, ok := object["items"].([]interface{}); ok && object["kind"] != nil {
			items = list
		}
		for _, item := range items {
			o, _ := item.(map[string]interface{})
			name := ""
			if meta, ok := o["metadata"].(map[string]interface{}); ok {
				name, _ = meta["name"].(string)
			}
			status, message, err := health(script, o)
			if err != nil {
				_ = encoder.Encode(answer{Name: name, Error: err.Error()})
				continue
			}
			if err := encoder.Encode(answer{Name: name, Status: status, Message: message}); err != nil {
				return err
			}
		}
	}
}

func health(script string, object map[string]interface{}) (string, string, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, openSafeOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, object))
	if err := l.DoString(script); err != nil {
		return "", "", err
	}
	result, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("expect table output from Lua script, not %s", l.Get(-1).Type())
	}
	status := lua.LVAsString(result.RawGetString("status"))
	message := lua.LVAsString(result.RawGetString("message"))
	if !codes[status] {
		return "Unknown", "Lua returned an invalid health status", nil
	}
	return status, message, nil
}

// A restricted os library, as Argo CD's (which has os.time and os.date; the checks here use neither).
func openSafeOs(l *lua.LState) int {
	mod := l.RegisterModule(lua.OsLibName, map[string]lua.LGFunction{
		"time": func(l *lua.LState) int { l.Push(lua.LNumber(time.Now().Unix())); return 1 },
	})
	l.Push(mod)
	return 1
}

func toLua(l *lua.LState, value interface{}) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []interface{}:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]interface{}:
		t := l.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetH(lua.LString(key), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}
