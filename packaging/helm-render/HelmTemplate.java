import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.nio.file.Path;

/**
 * Renders a Helm chart with helm-java, which embeds Helm's own engine (Go, as a native
 * library) behind a Java API: the output is what {@code helm template} prints.
 *
 * <pre>
 * java -cp 'packaging/helm-render/target/dependency/*' packaging/helm-render/HelmTemplate.java \
 *     template CHART RELEASE NAMESPACE [VALUES.yaml ...]
 * </pre>
 * Exit status 0 on success, 1 when Helm reports an error (printed on stderr).
 */
public final class HelmTemplate {
    private HelmTemplate() {
    }

    public static void main(String[] args) {
        if (args.length < 4 || !args[0].equals("template")) {
            System.err.println("usage: HelmTemplate template CHART RELEASE NAMESPACE [VALUES...]");
            System.exit(2);
        }
        Helm helm = new Helm(Path.of(args[1]));
        try {
            TemplateCommand template = helm.template().withName(args[2]).withNamespace(args[3])
                    // helm-java's default is v1.20.0; render as for a current cluster (HELM_KUBE_VERSION overrides).
                    .withKubeVersion(System.getenv().getOrDefault("HELM_KUBE_VERSION", "v1.32.0"));
            for (int i = 4; i < args.length; i++) {
                template = template.withValuesFile(Path.of(args[i]));
            }
            System.out.print(template.call());
        } catch (RuntimeException e) {
            System.err.println("helm: " + e.getMessage());
            System.exit(1);
        }
    }
}
