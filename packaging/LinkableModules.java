import java.lang.module.FindException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Requires;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Prints the jars of a directory that jlink can link into a runtime image, one {@code MODULE JAR} line each,
 * sorted by module name. Run by packaging/link-runtime.sh as a single-file program:
 * {@code java packaging/LinkableModules.java DIR}.
 *
 * <p>jlink links explicit modules only (a jar with a module-info), and only when everything they require
 * (leaving out {@code requires static}) is linkable too or a JDK module. Automatic modules (a plain jar on the
 * module path), jars that are not modules at all (the class path) and every explicit module that requires
 * one of them stay where they are.
 */
public final class LinkableModules {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java LinkableModules.java DIR");
            System.exit(2);
        }
        Map<String, ModuleReference> explicit = new TreeMap<>();
        Set<String> notLinkable = new TreeSet<>();
        try (Stream<Path> jars = Files.list(Path.of(args[0]))) {
            for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                // One jar at a time: a class-path jar (classes in the unnamed package) makes a finder over the
                // whole directory fail.
                try {
                    for (ModuleReference ref : ModuleFinder.of(jar).findAll()) {
                        if (ref.descriptor().isAutomatic()) {
                            notLinkable.add(ref.descriptor().name());
                        } else {
                            explicit.put(ref.descriptor().name(), ref);
                        }
                    }
                } catch (FindException notAModule) {
                    // not a module: stays on the class path
                }
            }
        }
        ModuleFinder jdk = ModuleFinder.ofSystem();
        boolean changed = true;
        while (changed) {
            changed = false;
            for (ModuleReference ref : explicit.values()) {
                ModuleDescriptor module = ref.descriptor();
                if (notLinkable.contains(module.name())) {
                    continue;
                }
                for (Requires requires : module.requires()) {
                    if (requires.modifiers().contains(Requires.Modifier.STATIC)) {
                        continue;
                    }
                    String needed = requires.name();
                    boolean linkable = explicit.containsKey(needed) ? !notLinkable.contains(needed)
                            : jdk.find(needed).isPresent();
                    if (!linkable) {
                        notLinkable.add(module.name());
                        changed = true;
                        break;
                    }
                }
            }
        }
        for (ModuleReference ref : explicit.values()) {
            if (!notLinkable.contains(ref.descriptor().name())) {
                System.out.println(ref.descriptor().name() + " " + Path.of(ref.location().orElseThrow()).getFileName());
            }
        }
    }
}
