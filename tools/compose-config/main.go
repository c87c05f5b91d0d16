// compose-config is `docker compose config` without Docker: the same loader (compose-go, the
// library Docker Compose loads every file with), the same options and the same post-processing as
// Docker Compose v5's config command, so a machine without a Docker engine or the compose plugin
// can check what docker-compose.yml resolves to. tools/compose.ts builds it into the cache outside
// the clone; test/deploy/compose.test.ts runs it.
//
//	compose-config [-f FILE]... [--project-directory DIR] [-p NAME] [--profile NAME]... [--env-file FILE]...
//	               [config] [--format json|yaml] [SERVICE...]
//
// The flags are Docker Compose's, so the same arguments work with `docker compose` and
// `docker-compose`. On a loader error (an unset `${VAR:?message}`, an invalid file) it prints the
// error to stderr and exits 1, as Docker Compose does.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

type options struct {
	files      []string
	projectDir string
	name       string
	profiles   []string
	envFiles   []string
	format     string
	services   []string
}

func parseArgs(args []string) (options, error) {
	o := options{format: "yaml"}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		flag, value, inline := strings.Cut(arg, "=")
		next := func() (string, error) {
			if inline {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag needs an argument: %s", flag)
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch {
		case arg == "config":
			// the subcommand's name, as in `docker compose config`
		case flag == "-f" || flag == "--file":
			v, err = next()
			o.files = append(o.files, v)
		case flag == "--project-directory":
			o.projectDir, err = next()
		case flag == "-p" || flag == "--project-name":
			o.name, err = next()
		case flag == "--profile":
			v, err = next()
			o.profiles = append(o.profiles, v)
		case flag == "--env-file":
			v, err = next()
			o.envFiles = append(o.envFiles, v)
		case flag == "--format":
			o.format, err = next()
		case strings.HasPrefix(arg, "-"):
			err = fmt.Errorf("unknown flag: %s", arg)
		default:
			o.services = append(o.services, arg)
		}
		if err != nil {
			return o, err
		}
	}
	if o.format != "json" && o.format != "yaml" {
		return o, fmt.Errorf("unsupported format %q", o.format)
	}
	return o, nil
}

// load follows docker/compose v5 cmd/compose/config.go (runConfigInterpolate) and
// internal/projectloader/loader.go (LoadProject, buildProjectOptions, postProcessProject),
// less what needs a Docker engine or the network (remote includes, image digests).
func load(ctx context.Context, o options) (*types.Project, error) {
	fns := []cli.ProjectOptionsFn{
		// the config command's own options, with none of its --no-* flags
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithDefaultProfiles(o.profiles...),
		cli.WithDiscardEnvFile,
		// the loader's
		cli.WithWorkingDirectory(o.projectDir),
		cli.WithOsEnv,
	}
	if _, present := os.LookupEnv("PWD"); !present {
		if pwd, err := os.Getwd(); err == nil {
			fns = append(fns, cli.WithEnv([]string{"PWD=" + pwd}))
		}
	}
	fns = append(fns,
		cli.WithEnvFiles(o.envFiles...),
		cli.WithDotEnv,
		cli.WithConfigFileEnv,
		cli.WithDefaultConfigPath,
		cli.WithEnvFiles(o.envFiles...),
		cli.WithDotEnv,
		cli.WithDefaultProfiles(o.profiles...),
		cli.WithName(o.name),
	)
	projectOptions, err := cli.NewProjectOptions(o.files, fns...)
	if err != nil {
		return nil, err
	}
	project, err := projectOptions.LoadProject(ctx)
	if err != nil {
		return nil, err
	}
	if project.Name == "" {
		return nil, fmt.Errorf("project name can't be empty. Use ProjectName option to set a valid name")
	}
	if project, err = project.WithServicesEnabled(o.services...); err != nil {
		return nil, err
	}
	if project, err = project.WithSelectedServices(o.services); err != nil {
		return nil, err
	}
	project = project.WithoutUnnecessaryResources()
	if project, err = project.WithServicesEnvironmentResolved(true); err != nil {
		return nil, err
	}
	if err = project.CheckContainerNameUnicity(); err != nil {
		return nil, err
	}
	return project, nil
}

func run() error {
	o, err := parseArgs(os.Args[1:])
	if err != nil {
		return err
	}
	project, err := load(context.Background(), o)
	if err != nil {
		return err
	}
	var content []byte
	if o.format == "json" {
		content, err = project.MarshalJSON()
	} else {
		content, err = project.MarshalYAML()
	}
	if err != nil {
		return err
	}
	// As Docker Compose does: the output is itself a valid compose file, so `$` is escaped.
	content = bytes.ReplaceAll(content, []byte{'$'}, []byte{'$', '$'})
	_, err = os.Stdout.Write(content)
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
