package bootstrap

import (
	"go.uber.org/fx"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/ports"
)

// useCaseModule wires the use cases and their background workers; each
// contributes its HTTP routes to the "routes" group.
var useCaseModule = fx.Module("usecases",
	fx.Provide(
		func(s ports.MetadataStore) *leaderconfirm.Latch { return leaderconfirm.NewLatch(s) },
		func(s ports.MetadataStore) *leaderconfirm.Confirmer { return leaderconfirm.New(s) },
	),
	topicsModule,
	produceModule,
	consumeModule,
	controllerModule,
	clusterModule,
	orphansModule,
	fanoutModule,
	redriveModule,
	remotesModule,
	joinModule,
)
