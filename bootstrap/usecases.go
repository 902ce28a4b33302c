package bootstrap

import "go.uber.org/fx"

// useCaseModule wires the use cases and their background workers; each
// contributes its HTTP routes to the "routes" group.
var useCaseModule = fx.Module("usecases")
