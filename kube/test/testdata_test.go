package test

// widgetCRD is a namespaced CRD with a status subresource, printer columns, defaults, an enum,
// a CEL rule and a selectable field: enough schema for every kubectl verb to exercise.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wg]
    categories: [all-widgets]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Ready
      type: string
      jsonPath: .status.conditions[?(@.type=="Ready")].status
    schema:
      openAPIV3Schema:
        type: object
        description: A widget of some color.
        properties:
          spec:
            type: object
            description: What the widget should be.
            x-kubernetes-validations:
            - rule: "self.size <= 100"
              message: size must be at most 100
            properties:
              color:
                type: string
                description: The widget's color.
                enum: [red, blue, green]
                default: blue
              size:
                type: integer
                default: 1
              tags:
                type: array
                maxItems: 3
                items: {type: string}
          status:
            type: object
            properties:
              observedGeneration: {type: integer}
              endpoint: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    observedGeneration: {type: integer}
                    lastTransitionTime: {type: string}
`

// widgetCRDv2 adds a served version v2 to widgetCRD (same schema, v1 still stored).
const widgetCRDv2Version = `  - name: v2
    served: true
    storage: false
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
