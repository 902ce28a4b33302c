// Package redrive runs the redrive jobs of dead-letter topics on the
// metadata leader (issue 19, docs/api-extensions.md "Redrive"): each job
// leases letters from its dead-letter topic, produces each one's key and
// payload byte for byte to its origin (or the job's target), acks it once
// that produce is durable, paces itself to the job's rate, and writes its
// progress into the topic's record so that any node reads it and a new
// leader resumes it.
package redrive
