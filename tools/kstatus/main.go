// kstatus prints the kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status) of Kubernetes objects, as
// Flux's health checks and cli-utils' `apply --wait` compute it for a kind they have no rules of their
// own for. It reads JSON on stdin: one object, a List (`kubectl get -o json`), or several of them one
// after another, decoded as client-go decodes what the API server sends; and writes one JSON line per
// object: {"kind","namespace","name","status","message","conditions"}.
//
//	$KUBECTL get rabbitmqvhosts,mariadbdatabases -A -o json | kstatus
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type line struct {
	Kind       string             `json:"kind"`
	Namespace  string             `json:"namespace,omitempty"`
	Name       string             `json:"name"`
	Status     status.Status      `json:"status"`
	Message    string             `json:"message"`
	Conditions []status.Condition `json:"conditions"`
}

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: kstatus < objects.json")
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	decoder := json.NewDecoder(in)
	encoder := json.NewEncoder(out)
	for {
		var raw json.RawMessage
		if err := decoder.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		// client-go's decoding: whole numbers become int64, which status.Compute's readers expect.
		decoded, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
		if err != nil {
			return fmt.Errorf("decoding an object: %w", err)
		}
		var objects []unstructured.Unstructured
		switch o := decoded.(type) {
		case *unstructured.UnstructuredList:
			objects = o.Items
		case *unstructured.Unstructured:
			objects = []unstructured.Unstructured{*o}
		default:
			return fmt.Errorf("unexpected %T", decoded)
		}
		for i := range objects {
			obj := &objects[i]
			result, err := status.Compute(obj)
			if err != nil {
				return fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
			conditions := result.Conditions
			if conditions == nil {
				conditions = []status.Condition{}
			}
			if err := encoder.Encode(line{
				Kind:       obj.GetKind(),
				Namespace:  obj.GetNamespace(),
				Name:       obj.GetName(),
				Status:     result.Status,
				Message:    result.Message,
				Conditions: conditions,
			}); err != nil {
				return err
			}
		}
	}
}
