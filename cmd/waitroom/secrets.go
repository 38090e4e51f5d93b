package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// loadSigningKey reads the signing key. Only embedded mode creates a
// missing one: with a real Redis several servers share one deployment, and
// a server that made up its own key would sign tokens the others refuse.
func loadSigningKey(cfg config, embedded bool, log *slog.Logger) (*token.Keyset, error) {
	if embedded {
		keys, created, err := token.LoadOrCreate(cfg.SigningKey)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		if created {
			log.Info("created a signing key", "path", cfg.SigningKey, "kid", keys.KID())
		}
		return keys, nil
	}
	data, err := os.ReadFile(cfg.SigningKey)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("signing key: %s does not exist. With --redis-url every server of a deployment must sign with the same key: create it once with `waitroom --create-signing-key --signing-key %s` and give the same file to every server (--signing-key)",
			cfg.SigningKey, cfg.SigningKey)
	}
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	keys, err := token.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("signing key: %s: %w", cfg.SigningKey, err)
	}
	return keys, nil
}

// createSigningKey is --create-signing-key: write a new key unless the file
// exists, and say where it is.
func createSigningKey(cfg config, log *slog.Logger) error {
	keys, created, err := token.LoadOrCreate(cfg.SigningKey)
	if err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	if created {
		log.Info("created a signing key: give this file to every server (--signing-key)", "path", cfg.SigningKey, "kid", keys.KID())
	} else {
		log.Info("the signing key exists already; left as it is", "path", cfg.SigningKey, "kid", keys.KID())
	}
	return nil
}

// kafkaAuth builds the Kafka clients' TLS and SASL from the flags.
func kafkaAuth(cfg config) (outbox.KafkaAuth, error) {
	var a outbox.KafkaAuth
	if cfg.KafkaTLS {
		a.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.KafkaTLSCA != "" {
			pem, err := os.ReadFile(cfg.KafkaTLSCA)
			if err != nil {
				return a, fmt.Errorf("--kafka-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return a, fmt.Errorf("--kafka-tls-ca %s: no PEM certificate in it", cfg.KafkaTLSCA)
			}
			a.TLS.RootCAs = pool
		}
	}
	m, err := outbox.NewSASL(cfg.KafkaSASL, cfg.KafkaUsername, cfg.KafkaPassword)
	if err != nil {
		return a, err
	}
	a.SASL = m
	return a, nil
}

// resultsGroup is this server's own consumer group of the results topic:
// every server reads every result (a shared group would hand each result
// to one server only, which drops it unless it took that intent). The id
// lives in the data directory, so a restart resumes where it stopped.
func resultsGroup(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "server-id")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return "", fmt.Errorf("server id: %w", err)
		}
		id := queue.RandomID()
		if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
			return "", fmt.Errorf("server id: %w", err)
		}
		data = []byte(id)
	} else if err != nil {
		return "", fmt.Errorf("server id: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if len(id) == 0 || len(id) > 64 {
		return "", fmt.Errorf("server id: %s: want 1 to 64 characters", path)
	}
	return outbox.DefaultResultsGroup + "." + id, nil
}
