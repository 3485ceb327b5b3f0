"""Test metrics (J&W §5): BC accuracy, per-class and macro P/R/F1, ROC-AUC, PR-AUC; QA/NLI accuracy."""

import numpy as np


def classification_metrics(task: str, labels: np.ndarray, probabilities: np.ndarray) -> dict:
    """`probabilities` is [N, C]; BC predicts class 1 iff p > 0.5."""
    # imported here, not at the top: scikit-learn adds ~1.5 s to the start of every job that imports this module
    from sklearn.metrics import accuracy_score, average_precision_score, precision_recall_fscore_support, roc_auc_score

    labels = np.asarray(labels)
    if task == "bc":
        p = probabilities[:, 1]
        predicted = (p > 0.5).astype(int)
        precision, recall, f1, support = precision_recall_fscore_support(labels, predicted, labels=[0, 1], zero_division=0)
        two_classes = len(np.unique(labels)) == 2
        return {
            "accuracy": float(accuracy_score(labels, predicted)),
            "roc_auc": float(roc_auc_score(labels, p)) if two_classes else float("nan"),
            "pr_auc": float(average_precision_score(labels, p)) if two_classes else float("nan"),
            "f1_positive": float(f1[1]),
            "f1_macro": float(np.mean(f1)),
            "per_class": {
                str(c): {
                    "precision": float(precision[c]),
                    "recall": float(recall[c]),
                    "f1": float(f1[c]),
                    "support": int(support[c]),
                }
                for c in (0, 1)
            },
            "n": int(len(labels)),
        }
    return {"accuracy": float(accuracy_score(labels, probabilities.argmax(axis=1))), "n": int(len(labels))}


def selection_metric(task: str, metrics: dict) -> float:
    """The number model selection maximises: ROC-AUC for BC, accuracy for QA/NLI."""
    return metrics["roc_auc"] if task == "bc" else metrics["accuracy"]
