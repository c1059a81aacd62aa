package config

import "path/filepath"

// AuditDirName is the audit trail's directory beside the config file.
const AuditDirName = "audit"

// AuditDir returns the directory of the audit trail of the config file at
// configPath: the managed policy's audit.dir if it sets one (a directory
// the organization may make one the user cannot write), else "audit"
// beside the config file, ~/.freecode/audit by default. m may be nil.
func AuditDir(configPath string, m *Managed) string {
	if m != nil && m.Audit.Dir != "" {
		return m.Audit.Dir
	}
	return filepath.Join(filepath.Dir(configPath), AuditDirName)
}
