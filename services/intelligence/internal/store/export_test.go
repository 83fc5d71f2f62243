package store

// AttributionSelect is the publisher's query, for tests that look at its plan.
var AttributionSelect = attributionSelect
