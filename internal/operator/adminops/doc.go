// Package adminops is what the admin API (/admin/api) and the dashboard
// (/admin) do alike: a degraded-mode drill, and the audit line every
// operator change gets, so both front ends behave and log as one.
package adminops
