package admission

// Audit actions of staff changing a show's waiting room (the console's
// queue page); the entry's target is the show.
const (
	AuditQueueSettings = "queue_settings"
	AuditQueuePause    = "queue_pause"
	AuditQueueResume   = "queue_resume"
)
