package topics

import (
	"strings"
	"testing"
)

// Ensure that the compatibility rules of api.md §2.8.1 accept widenings and
// refuse every narrowing, failing closed on keywords they cannot reason about.
func TestCompatible(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, old, new string
		want           string // "" = compatible, else a substring of the reason
	}{
		{"add_type", `{"type":"string"}`, `{"type":["string","null"]}`, ""},
		{"integer_to_number", `{"type":"integer"}`, `{"type":"number"}`, ""},
		{"number_to_integer", `{"type":"number"}`, `{"type":"integer"}`, `type "number" no longer allowed`},
		{"drop_type", `{"type":"integer"}`, `{}`, ""},
		{"add_type_keyword", `{}`, `{"type":"integer"}`, "type"},
		{"enum_grows", `{"enum":[1,2]}`, `{"enum":[1,2,3]}`, ""},
		{"enum_shrinks", `{"enum":[1,2]}`, `{"enum":[1]}`, "no longer allowed"},
		{"const_into_enum", `{"const":"a"}`, `{"enum":["a","b"]}`, ""},
		{"exact_numbers", `{"enum":[1.0]}`, `{"enum":[1]}`, ""},
		{"minimum_loosens", `{"minimum":5}`, `{"minimum":1}`, ""},
		{"minimum_tightens", `{"minimum":1}`, `{"minimum":5}`, "minimum tightened"},
		{"maximum_added", `{}`, `{"maximum":5}`, "maximum added"},
		{"maximum_loosens", `{"exclusiveMaximum":5}`, `{"exclusiveMaximum":50.5}`, ""},
		{"multiple_divisor", `{"multipleOf":6}`, `{"multipleOf":3}`, ""},
		{"multiple_not_divisor", `{"multipleOf":6}`, `{"multipleOf":4}`, "multipleOf"},
		{"min_length_zero_added", `{}`, `{"minLength":0}`, ""},
		{"min_length_added", `{}`, `{"minLength":1}`, "minLength added"},
		{"max_items_grows", `{"maxItems":2}`, `{"maxItems":3}`, ""},
		{"max_items_shrinks", `{"maxItems":3}`, `{"maxItems":2}`, "maxItems lowered"},
		{"pattern_changed", `{"pattern":"^a"}`, `{"pattern":"^b"}`, "pattern changed"},
		{"pattern_dropped", `{"pattern":"^a"}`, `{}`, ""},
		{"unique_dropped", `{"uniqueItems":true}`, `{"uniqueItems":false}`, ""},
		{"unique_added", `{}`, `{"uniqueItems":true}`, "uniqueItems"},
		{"required_fewer", `{"required":["a","b"]}`, `{"required":["a"]}`, ""},
		{"optional_property_added", `{"properties":{"a":{}}}`, `{"properties":{"a":{},"b":{"type":"string"}}}`, ""},
		{"property_removed", `{"properties":{"a":{}}}`, `{}`, `property "a" removed`},
		{"nested_path", `{"properties":{"qty":{"type":"integer"}}}`, `{"properties":{"qty":{"type":"string"}}}`, `at /properties/qty: type "integer" no longer allowed`},
		{"closed_model_opens", `{"additionalProperties":false}`, `{}`, ""},
		{"open_model_closes", `{}`, `{"additionalProperties":false}`, "schema now refuses every value"},
		{"extra_schema_checked", `{"additionalProperties":{"type":"string"}}`, `{"additionalProperties":{"type":"string"},"properties":{"x":{"type":"integer"}}}`, "x"},
		{"items_widen", `{"items":{"type":"integer"}}`, `{"items":{"type":"number"}}`, ""},
		{"items_narrow", `{"items":{"type":"number"}}`, `{"items":{"type":"integer"}}`, "items"},
		{"anyof_covered", `{"anyOf":[{"type":"string"}]}`, `{"anyOf":[{"type":"integer"},{"type":["string","null"]}]}`, ""},
		{"anyof_uncovered", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"}]}`, "anyOf branch 1"},
		{"allof_implied", `{"allOf":[{"minimum":5}]}`, `{"allOf":[{"minimum":1}]}`, ""},
		{"allof_added", `{}`, `{"allOf":[{"minimum":1}]}`, "allOf"},
		{"oneof_identical", `{"oneOf":[{"type":"string"}]}`, `{"oneOf":[{"type":"string"}]}`, ""},
		{"oneof_changed", `{"oneOf":[{"type":"string"}]}`, `{"oneOf":[{"type":"string"},{"type":"null"}]}`, "oneOf changed"},
		{"schema_changed", `{"$schema":"https://json-schema.org/draft/2020-12/schema"}`, `{"$schema":"http://json-schema.org/draft-07/schema#"}`, "$schema"},
		{"annotations_free", `{"title":"a","type":"object"}`, `{"description":"b","type":"object"}`, ""},
		{"defs_followed", `{"$defs":{"id":{"type":"integer"}},"properties":{"id":{"$ref":"#/$defs/id"}}}`, `{"$defs":{"id":{"type":"string"}},"properties":{"id":{"$ref":"#/$defs/id"}}}`, "no longer allowed"},
		{"recursive_ref", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"description":"node"}},"$ref":"#/$defs/n"}`, ""},
		{"true_to_false", `true`, `false`, "refuses every value"},
		{"false_to_anything", `false`, `{"type":"string"}`, ""},
		{"true_to_object", `true`, `{"type":"string"}`, "type"},
		{"unknown_keyword_added", `{}`, `{"x-custom":1}`, "x-custom added"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := compatible([]byte(tc.old), []byte(tc.new))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted, want refusal containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("reason %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
