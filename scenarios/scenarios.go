// Package scenarios is the scenario schema: the YAML a user writes, its
// defaults, strict loading with errors that name the file, line and key,
// --set overrides, validation, and the resolution of derived values. It also
// embeds the default scenario and holds the example scenarios (*.yaml).
package scenarios
