public enum LineSocketPlaceholder {}
