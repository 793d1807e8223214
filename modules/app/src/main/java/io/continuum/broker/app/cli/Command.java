package io.continuum.broker.app.cli;

import java.nio.file.Path;

/** What the command line asks for, parsed from the arguments in order; the first answer wins. */
sealed interface Command {
    /** {@code --help} or {@code -h}. */
    record Help() implements Command {
    }

    /** {@code --version}. */
    record Version() implements Command {
    }

    /** {@code --check-config}: validate the configuration, credential and CA bundle, then exit. */
    record CheckConfig(Path configPath) implements Command {
    }

    /** Run the broker until a shutdown signal. */
    record RunBroker(Path configPath) implements Command {
    }

    /** The arguments are wrong; {@code problem} is printed above the usage line. */
    record UsageError(String problem) implements Command {
    }

    /**
     * Parses {@code [--config PATH | --config=PATH] [--check-config] [--help] [--version]}. Help and version
     * answer at once (an error in an earlier argument still wins); an option given twice, an unknown option
     * or a positional argument is a usage error.
     */
    static Command parse(String[] args, Path defaultConfigPath) {
        Path configPath = defaultConfigPath;
        boolean configGiven = false;
        boolean check = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> {
                    return new Help();
                }
                case "--version" -> {
                    return new Version();
                }
                case "--check-config" -> {
                    if (check) {
                        return new UsageError("--check-config given twice");
                    }
                    check = true;
                }
                default -> {
                    String value;
                    if (a.equals("--config")) {
                        if (i + 1 >= args.length) {
                            return new UsageError("--config needs a PATH");
                        }
                        value = args[++i];
                    } else if (a.startsWith("--config=")) {
                        value = a.substring("--config=".length());
                    } else if (a.startsWith("-")) {
                        return new UsageError("unknown option '" + a + "'");
                    } else {
                        return new UsageError("unexpected argument '" + a + "'");
                    }
                    if (configGiven) {
                        return new UsageError("--config given twice");
                    }
                    if (value.isEmpty()) {
                        return new UsageError("--config needs a non-empty PATH");
                    }
                    configGiven = true;
                    configPath = Path.of(value);
                }
            }
        }
        return check ? new CheckConfig(configPath) : new RunBroker(configPath);
    }
}
