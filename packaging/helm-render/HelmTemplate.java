import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Renders a Helm chart with helm-java, which embeds Helm's own engine (Go, as a native library)
 * behind a Java API: the output is what {@code helm template} prints.
 *
 * <pre>
 * java -cp 'packaging/helm-render/target/dependency/*' packaging/helm-render/HelmTemplate.java \
 *     template CHART RELEASE NAMESPACE [VALUES.yaml ...]      (one render to stdout)
 * java -cp ... HelmTemplate.java batch OUTDIR CHART RELEASE NAMESPACE VALUES.yaml ...
 *     (one render per values file, in one JVM: OUTDIR/NAME.yaml, or OUTDIR/NAME.err on failure)
 * </pre>
 * The Kubernetes version rendered for is v1.32.0 (helm-java's default is v1.20.0);
 * HELM_KUBE_VERSION overrides it. Exit status 0 on success, 1 when a template render fails.
 */
public final class HelmTemplate {
    private HelmTemplate() {
    }

    private static TemplateCommand command(String chart, String release, String namespace) {
        return new Helm(Path.of(chart)).template().withName(release).withNamespace(namespace)
                .withKubeVersion(System.getenv().getOrDefault("HELM_KUBE_VERSION", "v1.32.0"));
    }

    public static void main(String[] args) throws IOException {
        if (args.length >= 4 && args[0].equals("template")) {
            TemplateCommand template = command(args[1], args[2], args[3]);
            for (int i = 4; i < args.length; i++) {
                template = template.withValuesFile(Path.of(args[i]));
            }
            try {
                System.out.print(template.call());
            } catch (RuntimeException e) {
                System.err.println("helm: " + e.getMessage());
                System.exit(1);
            }
            return;
        }
        if (args.length >= 6 && args[0].equals("batch")) {
            Path out = Files.createDirectories(Path.of(args[1]));
            for (int i = 5; i < args.length; i++) {
                Path values = Path.of(args[i]);
                String name = values.getFileName().toString().replaceFirst("\\.ya?ml$", "");
                try {
                    Files.writeString(out.resolve(name + ".yaml"), command(args[2], args[3], args[4]).withValuesFile(values).call());
                } catch (RuntimeException e) {
                    Files.writeString(out.resolve(name + ".err"), String.valueOf(e.getMessage()));
                }
            }
            return;
        }
        System.err.println("usage: HelmTemplate template CHART RELEASE NAMESPACE [VALUES...]"
                + " | batch OUTDIR CHART RELEASE NAMESPACE VALUES...");
        System.exit(2);
    }
}
