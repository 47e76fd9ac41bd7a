/*
 * Measurement tool for docs/benchmarks.md section 14 (issue 27): times ARX's full-domain search
 * (Flash) on the bundled Adult data with the hierarchies of conf/adult_fd_k.yaml.
 *
 * Our own code; it calls only ARX's public API (ARX is Apache-2.0, https://arx.deidentifier.org).
 * Written against ARX 3.9.2 (ARXAnonymizer.VERSION of the build in /work/tmp/arx; the commit of
 * that source snapshot was not recorded).
 *
 * Usage:
 *   java -cp <classpath> ArxSearchDriver <csv> <hierarchy dir> <qi,qi,...> <k> <max suppression>
 *        <runs> [precision-monotonic|precision|height]
 *
 * Every column not named as a quasi-identifier is insensitive. The CSV is read with ',' and the
 * hierarchies (<hierarchy dir>/<qi>.csv) with ';', as ARX ships them. Each run builds a fresh Data
 * object (not timed) and times ARXAnonymizer.anonymize() alone. One JSON line per run on stdout:
 * run, seconds (wall of anonymize()), arx_ms (ARXResult.getTime()), node (levels in the order of
 * the quasi-identifiers given), suppressed rows, checked (nodes whose classes ARX formed,
 * ARXNode.isChecked()), checked_or_bounded (ARXProcessStatistics.getTransformationsChecked(): also
 * the nodes whose loss bound decided them), lattice (nodes in the search space) and the optimum's
 * information loss.
 */

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;

/** Times ARX's anonymize() (Flash) for k-anonymity with full-domain generalization. */
public class ArxSearchDriver {

    /** Loads the CSV and defines the quasi-identifiers with their hierarchies. */
    static Data load(String csv, String hierarchyDir, List<String> qis) throws Exception {
        Data data = Data.create(csv, StandardCharsets.UTF_8, ',');
        DataHandle handle = data.getHandle();
        for (int c = 0; c < handle.getNumColumns(); c++) {
            String name = handle.getAttributeName(c);
            if (qis.contains(name)) {
                Hierarchy h = Hierarchy.create(new File(hierarchyDir, name + ".csv").getPath(),
                                               StandardCharsets.UTF_8, ';');
                data.getDefinition().setAttributeType(name, h);
            } else {
                data.getDefinition().setAttributeType(name, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }
        return data;
    }

    /** The loss metric named on the command line. */
    static Metric<?> metric(String name) {
        switch (name) {
            case "precision-monotonic":
                return Metric.createPrecisionMetric(true);
            case "precision":
                return Metric.createPrecisionMetric(false);
            case "height":
                return Metric.createHeightMetric();
            default:
                throw new IllegalArgumentException("unknown metric: " + name);
        }
    }

    /** Rows of the output that ARX suppressed. */
    static int suppressed(DataHandle out) {
        int n = 0;
        for (int r = 0; r < out.getNumRows(); r++) {
            if (out.isOutlier(r)) {
                n++;
            }
        }
        return n;
    }

    /** Nodes of the search space whose classes ARX formed (ARXNode.isChecked()). */
    static int checked(ARXResult result) {
        int n = 0;
        for (ARXNode[] level : result.getLattice().getLevels()) {
            for (ARXNode node : level) {
                if (node.isChecked()) {
                    n++;
                }
            }
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: ArxSearchDriver <csv> <hierarchy dir> <qi,...> <k> <max suppression> <runs> [metric]");
            System.exit(2);
        }
        String csv = args[0];
        String hierarchyDir = args[1];
        List<String> qis = Arrays.asList(args[2].split(","));
        int k = Integer.parseInt(args[3]);
        double maxSuppression = Double.parseDouble(args[4]);
        int runs = Integer.parseInt(args[5]);
        String metricName = args.length > 6 ? args[6] : "precision-monotonic";

        for (int run = 1; run <= runs; run++) {
            Data data = load(csv, hierarchyDir, qis);
            ARXConfiguration config = ARXConfiguration.create();
            config.addPrivacyModel(new KAnonymity(k));
            config.setSuppressionLimit(maxSuppression);
            config.setQualityModel(metric(metricName));
            ARXAnonymizer anonymizer = new ARXAnonymizer();

            long t0 = System.nanoTime();
            ARXResult result = anonymizer.anonymize(data, config);
            long t1 = System.nanoTime();

            ARXNode optimum = result.getGlobalOptimum();
            StringBuilder node = new StringBuilder("[");
            for (int i = 0; i < qis.size(); i++) {
                node.append(i == 0 ? "" : ",").append(optimum == null ? -1 : optimum.getGeneralization(qis.get(i)));
            }
            node.append("]");
            int supp = optimum == null ? -1 : suppressed(result.getOutput(optimum, false));
            System.out.println("{\"run\":" + run
                    + ",\"seconds\":" + ((t1 - t0) / 1e9)
                    + ",\"arx_ms\":" + result.getTime()
                    + ",\"metric\":\"" + metricName + "\""
                    + ",\"k\":" + k + ",\"max_suppression\":" + maxSuppression
                    + ",\"node\":" + node
                    + ",\"suppressed\":" + supp
                    + ",\"rows\":" + data.getHandle().getNumRows()
                    + ",\"checked\":" + checked(result)
                    + ",\"checked_or_bounded\":" + result.getProcessStatistics().getTransformationsChecked()
                    + ",\"lattice\":" + result.getProcessStatistics().getTransformationsAvailable()
                    + ",\"loss\":\"" + (optimum == null ? "" : optimum.getHighestScore().toString()) + "\""
                    + ",\"arx\":\"" + ARXAnonymizer.VERSION + "\"}");
        }
    }
}
